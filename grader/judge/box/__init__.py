"""What runs inside the judge's box: the trust boundary, as a folder.

Everything here is copied into the kit tree (`grader.judge.kit_tree`) beside the lessons' kits and
runs in the sandboxed child or the zygote it forks from, next to student code: the child that runs
the answer cells and reports observations (`child`), its sealed conversation with the trusted
process (`channel`), the watch on JAX functions (`tripwires`, `callers`), the fingerprint of what
student code may not change (`tamper`), the fork server (`zygote`), the grading kernel's own cut
of what it prints (`outstream`) and the limits a box applies to itself (`confine`, `seccomp`).
Nothing here knows an expected value; nothing outside this folder (and the kits) is in the box.
"""
