"""The out-of-kernel judge: re-runs each graded exercise where the student's kernel cannot reach.

`child` runs inside the sandbox and only *observes* the student's code on cases it is sent one at
a time (`session` is the trusted side of that conversation, `channel` its sealed lines), watching
JAX's functions (`tripwires`, `callers`) and the observers (`tamper`); `sandbox` builds that
process (bubblewrap, limits); `runner` draws cases, reads the answers (`delegation`, across cells:
`reach`), runs the children and takes the verdicts (`decide`) in the trusted process;
`preprocessor` plugs it into nbgrader autograde; `warm` judges the instructor's solutions first,
filling the compilation cache children only read. The limits: `execute` (nbgrader's Execute,
bounded: the grading kernel's output, memory, tasks, CPU, folder and environment; `watchdog`
reads them while it runs, `channels` caps what ZeroMQ reads), `watch` (a child's pipes and
clock), `cgroup` (one group per box, else `confine`'s rlimits), `quota` (the submission folder);
one `sandbox.Budget` of time per submission, for its kernel and its judge together.
"""
