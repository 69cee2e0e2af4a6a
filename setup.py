"""Builds amq's Python extension (amq._amq) with this project's CMake build, for the
interpreter that runs pip, and puts it in the package. pyproject.toml holds the
metadata. Extra CMake arguments: the environment variable CMAKE_ARGS."""
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        tag = sysconfig.get_config_var("SOABI") or "py%d%d" % sys.version_info[:2]
        build_dir = os.path.join(ROOT, "build", "pip-" + tag)
        args = [
            "-DCMAKE_BUILD_TYPE=Release",
            "-DPython3_EXECUTABLE=" + sys.executable,
            "-DAMQ_BUILD_PYTHON=ON",
            "-DAMQ_BUILD_TESTS=OFF",
            "-DAMQ_BUILD_TOOLS=OFF",
            "-DAMQ_BUILD_BENCH=OFF",
            # A package may be copied to other machines: no -march=native (the library
            # still picks AVX2/BMI2 kernels at run time).
            "-DAMQ_NATIVE=OFF",
        ]
        try:
            import pybind11
            args.append("-Dpybind11_DIR=" + pybind11.get_cmake_dir())
        except ImportError:
            pass  # CMake looks in the system's places (Debian's pybind11-dev)
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        args += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        subprocess.run(["cmake", "-S", ROOT, "-B", build_dir] + args, check=True)
        subprocess.run(["cmake", "--build", build_dir, "--target", "_amq", "-j", str(os.cpu_count() or 1)],
                       check=True)
        built = os.path.join(build_dir, "python", "amq", os.path.basename(self.get_ext_filename(ext.name)))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[CMakeExtension("amq._amq")], cmdclass={"build_ext": CMakeBuild})
