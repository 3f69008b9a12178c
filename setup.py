"""Build script: only declares the Cython extensions; metadata lives in setup.cfg."""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

ENGINE_MODULES = ["_core", "_encode", "state", "batch", "bots"]

extensions = [
    Extension(
        f"lbs_pz.engine.{name}",
        [f"lbs_pz/engine/{name}.pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"],
    )
    for name in ENGINE_MODULES
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
