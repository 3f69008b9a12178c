"""Build script: only declares the Cython extensions; metadata lives in setup.cfg."""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

CYTHON_MODULES = [
    "lbs_pz.engine._core",
    "lbs_pz.engine._encode",
    "lbs_pz.engine.state",
    "lbs_pz.engine.batch",
    "lbs_pz.agents.rule_bots._bots",
    "lbs_pz.agents._card_features",
    "lbs_pz.search.beliefs._exact",
]

extensions = [
    Extension(
        name,
        [name.replace(".", "/") + ".pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"],
    )
    for name in CYTHON_MODULES
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
