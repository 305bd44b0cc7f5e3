"""The core: drivers, vector env, threads, checks of bad input, the numba cache, the GPU
build."""
