"""The course's Jupyter server (``make lab``, and the grading server docs/instructors.md describes).

``make lab`` puts this folder on JUPYTER_CONFIG_PATH, so Jupyter reads this file beside its own
configuration. The formgrader shows students' notebooks in this server's origin, where a script
is the instructor: it can start kernels and open terminals as the server's user, and rewrite
grades through the formgrader's API. The course renders every submission inert
(grader/nbgrader_plugins/html.py); this server adds what a browser enforces whatever a page holds:

* no terminals: nothing of the course needs one (a script that reached this origin once opened
  one as root and ran commands);
* a Content-Security-Policy (`CSP`): scripts, styles, fonts and frames from this server only (no
  other site's script but the MathJax nbgrader's formgrader loads, no plug-in), connections and
  form posts to it only (nothing sent elsewhere), images from it or inline, and pages framed by
  its own only (the formgrader is a frame of JupyterLab). Inline scripts stay allowed: nbgrader's
  formgrader pages are built of them (they name the submission), and JupyterLab's settings
  validator compiles code (``unsafe-eval``).
  So the CSP is the second line, not the first: it keeps what a script could do to this origin.
  Files served raw (``/files/``) get jupyter_server's own ``sandbox`` on top.
"""
c = get_config()  # noqa: F821  (provided by Jupyter)

# nbgrader's formgrade template loads MathJax 2 from cdnjs, by a URL it writes out (its grading
# page's script stops without it: MathJax.Hub); MathJax's latest.js asks cdnjs's API for the newest
# 2.x first. Those two places, and no other site.
MATHJAX = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/"
MATHJAX_API = "https://api.cdnjs.com/libraries/mathjax"
CSP = "; ".join([
    "default-src 'none'",
    f"script-src 'self' 'unsafe-inline' 'unsafe-eval' {MATHJAX}",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    f"font-src 'self' data: {MATHJAX}",
    f"connect-src 'self' {MATHJAX_API}",
    "worker-src 'self' blob:",
    "frame-src 'self'",
    "manifest-src 'self'",
    "media-src 'self' data: blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
])
c.ServerApp.terminals_enabled = False
c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": CSP}}
