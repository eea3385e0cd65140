"""PEP 517 build backend of the mla_decode package, on the standard library alone.

pip builds a package in an isolated environment into which it installs the backend named in
pyproject.toml; with setuptools that needs a package index (PyPI, or a mirror), so an offline
`pip install ./python` would fail. This backend needs nothing: it zips mla_decode/*.py (and a
libmla_decode shared library copied into mla_decode/, if any: the wheel is then tagged for
this platform) with the metadata a wheel must carry (PEP 427, core metadata 2.1).

Hooks: build_wheel, build_editable (PEP 660: a .pth file naming this folder), build_sdist.
"""
import base64
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import zipfile

NAME = "mla_decode"
HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, NAME)
SUMMARY = "ctypes binding of libmla_decode: decode-step Multi-head Latent Attention kernels"


def _version():
    with open(os.path.join(PACKAGE, "_abi.py"), encoding="utf-8") as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nLicense: MIT\n"
            "Requires-Python: >=3.8\n" % (NAME, _version(), SUMMARY)).encode()


def _package_files(with_library):
    """(path, name in the archive) of the package's modules and, if asked, the library (one
    copy per distinct file: symbolic links to a file already taken are left out)."""
    seen = set()
    for name in sorted(os.listdir(PACKAGE), key=len):
        path = os.path.join(PACKAGE, name)
        library = name.startswith("libmla_decode")
        if not (name.endswith(".py") or (library and with_library)) or not os.path.isfile(path):
            continue
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            yield path, "%s/%s" % (NAME, name)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (arcname, digest, len(data))


def _wheel(wheel_directory, entries, native):
    """Write a wheel of entries [(name in the archive, bytes)]; its file name."""
    version = _version()
    tag = ("py3-none-" + re.sub(r"[-.]", "_", sysconfig.get_platform())) if native \
        else "py3-none-any"
    info = "%s-%s.dist-info" % (NAME, version)
    wheel = ("Wheel-Version: 1.0\nGenerator: mla_build\nRoot-Is-Purelib: %s\nTag: %s\n" %
             ("false" if native else "true", tag)).encode()
    entries = entries + [(info + "/METADATA", _metadata()), (info + "/WHEEL", wheel)]
    record = "".join(_record_line(name, data) for name, data in entries) + info + "/RECORD,,\n"
    filename = "%s-%s-%s.whl" % (NAME, version, tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for name, data in entries + [(info + "/RECORD", record.encode())]:
            z.writestr(name, data)
    return filename


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = []
    native = False
    for path, arcname in _package_files(with_library=True):
        with open(path, "rb") as f:
            entries.append((arcname, f.read()))
        native = native or not arcname.endswith(".py")
    return _wheel(wheel_directory, entries, native)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, [(NAME + "_editable.pth", (HERE + "\n").encode())], False)


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for name in ("pyproject.toml", "mla_build.py"):
            tar.add(os.path.join(HERE, name), "%s/%s" % (base, name))
        for path, arcname in _package_files(with_library=False):
            tar.add(path, "%s/%s" % (base, arcname))
        pkg_info = tarfile.TarInfo("%s/PKG-INFO" % base)
        pkg_info.size = len(_metadata())
        tar.addfile(pkg_info, io.BytesIO(_metadata()))
    return filename
