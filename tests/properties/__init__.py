"""Property tests: what must hold of JAX for every function of a grammar, not only for the lessons' examples."""
