"""Setuptools shim; the project metadata lives in setup.cfg."""

from setuptools import setup

setup()
