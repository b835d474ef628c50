"""The words the delegation reading (`grader.judge.delegation`) looks for: what runs or reaches code
by a computed name or behind the code's back, what watches calls, what changes a table."""

# Calls that run code, or reach objects, by computed names or behind the code's back.
HIDING_CALLS = frozenset({"exec", "eval", "compile", "__import__", "globals", "locals", "vars",
                          "breakpoint", "setattr", "delattr", "attrgetter", "methodcaller",
                          "resolve_name", "import_module", "setitem", "delitem",
                          # a dotted path or attribute taken from a string at run time
                          "locate", "get_field", "update_wrapper",
                          # an entry point loads the object its "module:attr" string names
                          "EntryPoint", "entry_points",
                          # code run from a string by a profiler, debugger or typing's evaluation
                          "runctx", "runeval", "get_type_hints", "dictConfig", "BaseConfigurator",
                          "_resolve",
                          # a Formatter subclass's format_field gets the object "{0.name}" names
                          "Formatter", "format_field", "convert_field", "get_value", "vformat",
                          # an interactive console compiles and runs the string it is given
                          "runsource", "runcode", "InteractiveConsole", "InteractiveInterpreter",
                          "InteractiveColoredConsole"})
DYNAMIC_ATTRS = frozenset({"getattr"})
HIDING_ATTRS = frozenset({
    "__dict__", "__globals__", "__code__", "__closure__", "__builtins__", "__subclasses__",
    "__mro__", "__bases__", "__getattribute__", "__setattr__", "__delattr__", "__wrapped__",
    "__loader__", "__spec__", "__self__", "__func__", "f_globals", "f_locals", "f_back",
    "gi_frame", "_getframe", "modules", "meta_path", "__getattr__", "__setitem__", "__delitem__",
    # the originals behind a wrapper: its closure, defaults and constants, read as data
    "cell_contents", "getclosurevars", "nonlocals", "__kwdefaults__", "__defaults__",
    "co_consts", "getmembers",
    # importlib's machinery reached without importlib: a finder, a loader, and what compiles
    "path_importer_cache", "path_hooks", "find_spec", "loader", "source_to_code", "exec_module",
    "get_code", "_bootstrap", "_bootstrap_external", "_find_and_load",
    # a frame's builtins and globals reached from a traceback, a generator or a coroutine
    # (red team, round 9: ``err.__traceback__.tb_frame.f_builtins["get" + "attr"]``)
    "__traceback__", "tb_frame", "tb_next", "f_builtins", "f_code", "cr_frame", "ag_frame",
    "gi_yieldfrom", "cr_await", "ag_await"})
# What watches calls: the judge's child watches an answer with these, which must stay its own.
TRACING_ATTRS = frozenset({"monitoring", "settrace", "setprofile", "settrace_all_threads",
                           "setprofile_all_threads", "gettrace", "getprofile", "_current_frames",
                           "addaudithook", "call_tracing"})
# A partial's parts, taken from a lookup (JAX's rule tables hold partials of its own rules).
PARTIAL_ATTRS = frozenset({"func", "keywords"})
# Methods that change the dict or list they are called on.
MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear"})
# What an exercise about reading modules may use to read them.
READING_MODULES = frozenset({"vars", "__dict__"})
# Modules that call code without naming it, or change code they do not own (mock); the last line
# compile a string into code and run it (timeit's stmt, a doctest, a profiler's or debugger's run).
HIDING_MODULES = frozenset({"importlib", "ctypes", "gc", "inspect", "marshal", "pickle",
                            "builtins", "runpy", "code", "codeop", "dill", "cloudpickle",
                            "pkgutil", "mock", "pydoc",
                            "timeit", "doctest", "cProfile", "profile", "pdb", "bdb", "_pyrepl"})
COURSE_PACKAGE = "grader"
TOO_LARGE = ("its answer cells are too large to read: more than {most:,} syntax-tree nodes "
             "together (the judge's limit, JudgeExercises.answer_nodes; the largest instructor "
             "solution has under 1,000), so the judge neither read nor ran them")
TOO_DEEP = "its code is nested too deeply to read (an expression or block thousands of levels deep)"
