"""Packaging: the in-tree build backend makes a wheel of the package alone (or with a library
copied next to it), `pip install ./python` works without a package index, and the installed
package finds its library through MLA_DECODE_LIBRARY or next to itself."""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

import mla_decode as mla
from conftest import PYTHON_DIR

sys.path.insert(0, PYTHON_DIR)
import mla_build  # noqa: E402


def test_wheel_holds_the_package_and_its_metadata(tmp_path):
    name = mla_build.build_wheel(str(tmp_path))
    assert name == "mla_decode-%s-py3-none-any.whl" % mla.__version__
    with zipfile.ZipFile(str(tmp_path / name)) as z:
        names = set(z.namelist())
        info = "mla_decode-%s.dist-info/" % mla.__version__
        assert {"mla_decode/__init__.py", "mla_decode/_abi.py", "mla_decode/_api.py",
                info + "METADATA", info + "WHEEL", info + "RECORD"} <= names
        assert "Version: %s" % mla.__version__ in z.read(info + "METADATA").decode()
        assert not any(n.startswith("tests/") or ".so" in n for n in names)
    sdist = mla_build.build_sdist(str(tmp_path))
    assert sdist == "mla_decode-%s.tar.gz" % mla.__version__


def run_python(code, env_library, cwd, path):
    env = dict(os.environ, PYTHONPATH=path)
    env.pop("MLA_DECODE_LIBRARY", None)
    if env_library:
        env["MLA_DECODE_LIBRARY"] = env_library
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_pip_install_offline_and_find_the_library(tmp_path):
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        pytest.skip("no pip for %s" % sys.executable)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                    "--disable-pip-version-check", "--target", str(target), PYTHON_DIR],
                   check=True, capture_output=True, cwd=str(tmp_path))
    library = os.path.abspath(mla.load_library()._name)
    code = ("import mla_decode as m; print(m.__file__); print(m.version()); "
            "print(m.load_library()._name)")
    out = run_python(code, library, str(tmp_path), str(target)).splitlines()
    assert out[0].startswith(str(target)) and out[1] == mla.version() and out[2] == library
    # next to the package, without MLA_DECODE_LIBRARY
    local = target / "mla_decode" / "libmla_decode.so"
    shutil.copy(library, str(local))
    out = run_python(code, None, str(tmp_path), str(target)).splitlines()
    assert out[2] == str(local)
