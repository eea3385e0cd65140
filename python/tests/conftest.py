"""pytest setup: the package from this checkout (python/), the library from MLA_DECODE_LIBRARY
(ctest sets it to the built library) or wherever mla_decode finds one.

    MLA_DECODE_LIBRARY=build/src/libmla_decode.so python3 -m pytest python/tests
"""
import os
import sys

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(PYTHON_DIR)
sys.path.insert(0, PYTHON_DIR)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # oracle.py
