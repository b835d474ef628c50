"""The out-of-kernel judge: re-runs each graded exercise where the student's kernel cannot reach.

`child` runs inside the sandbox and only *observes* the student's code on cases it is given;
`sandbox` builds that process (bubblewrap, limits); `runner` draws cases, collects observations
and computes the verdict in the trusted process; `preprocessor` plugs it into nbgrader autograde;
`warm` judges the instructor's solutions first, filling the compilation cache children only read.
"""
