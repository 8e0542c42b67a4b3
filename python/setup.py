"""Tags the wheel with the one platform its JAR's native library runs on.

The plugin JAR in indextables/jars/ carries tantivy4java's linux-x86_64 library
(libtantivy4java.so), which needs glibc 2.34 or newer (its newest versioned glibc symbol is
GLIBC_2.34, as `objdump -T` shows; tests/test_wheel.py checks that against the shipped JAR). So
the wheel is `py3-none-manylinux_2_34_x86_64`, installed as platform code, not `py3-none-any`.
Everything else is declared in pyproject.toml.
"""

from __future__ import annotations

from setuptools import Distribution, setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1 keeps it in the wheel package
    from wheel.bdist_wheel import bdist_wheel

PLATFORM_TAG = "manylinux_2_34_x86_64"


class PlatformDistribution(Distribution):
    """Platform code (the JAR's native library): installed as platlib, the wheel's root."""

    def has_ext_modules(self) -> bool:
        return True


class PlatformWheel(bdist_wheel):
    """A wheel for any Python 3 (no compiled Python code) on PLATFORM_TAG only."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> tuple[str, str, str]:
        return "py3", "none", PLATFORM_TAG


setup(distclass=PlatformDistribution, cmdclass={"bdist_wheel": PlatformWheel})
