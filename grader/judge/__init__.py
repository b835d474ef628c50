"""The out-of-kernel judge: re-runs each graded exercise where the student's kernel cannot reach.

`child` runs inside the sandbox and only *observes* the student's code on cases it is given;
`sandbox` builds that process (bubblewrap, limits); `runner` draws cases, collects observations
and computes the verdict in the trusted process; `preprocessor` plugs it into nbgrader autograde;
`warm` judges the instructor's solutions first, filling the compilation cache children only read.
The limits: `execute` (nbgrader's Execute, bounded: the grading kernel's output, memory, tasks,
CPU, folder and environment; `channels` caps what ZeroMQ reads), `watch` (a child's pipes and
clock), `cgroup` (one group per box, else `confine`'s rlimits), `quota` (the submission folder).
"""
