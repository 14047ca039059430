"""StandardFileResourceService and FileResource (NiFi's StandardFileResourceServiceTest)."""

from __future__ import annotations

import os
import pickle
import re
from pathlib import Path

import pytest

from flowcore.controller_service import ServiceContext
from flowcore.registry import service_class
from processors.file_resource import (
    FileChangedError,
    FileResource,
    FileResourceError,
    StandardFileResourceService,
)

DATA = b"nifi"


def _service(path: str) -> StandardFileResourceService:
    service = StandardFileResourceService("files", file_path=path)
    assert not [p for p in service.validate() if not p.valid]
    return service.enable(ServiceContext(service))


def _file(tmp_path: Path, name: str = "data") -> Path:
    path = tmp_path / name
    path.write_bytes(DATA)
    return path


def test_valid_file(tmp_path: Path) -> None:
    """A literal path gives the file, its size and its bytes (NiFi's testValidFile)."""
    path = _file(tmp_path)
    resource = _service(str(path)).get_file_resource({})
    assert (resource.path, resource.size) == (str(path), len(DATA))
    with resource.open() as handle:
        assert handle.read() == DATA


def test_valid_file_using_expression_language(tmp_path: Path) -> None:
    """File Path evaluates the FlowFile's attributes (NiFi's testValidFileUsingEL)."""
    path = _file(tmp_path)
    service = _service("${file.path}")
    assert service.get_file_resource({"file.path": str(path)}).size == len(DATA)


def test_default_path_is_absolute_path_and_filename(tmp_path: Path) -> None:
    """The default File Path, ${absolute.path}/${filename}, names what ListFile/GetFile list."""
    path = _file(tmp_path, "listed.csv")
    service = StandardFileResourceService("files").enable(
        ServiceContext(StandardFileResourceService("files"))
    )
    attributes = {"absolute.path": str(tmp_path), "filename": "listed.csv"}
    assert service.get_file_resource(attributes).path == str(path)


def test_missing_attribute_and_missing_file_fail_with_nifi_messages(tmp_path: Path) -> None:
    """A missing attribute, file or a directory: NiFi's messages, naming the path."""
    service = _service("${file.path}")
    with pytest.raises(FileResourceError, match=r"^Evaluated path is empty\. Path expression: "):
        service.get_file_resource({})
    gone = tmp_path / "nonExistingFile"
    with pytest.raises(FileResourceError, match=r"^Path does not exist or it is not a file: "):
        service.get_file_resource({"file.path": str(gone)})
    with pytest.raises(FileResourceError, match=f"it is not a file: {re.escape(str(tmp_path))}$"):
        service.get_file_resource({"file.path": str(tmp_path)})


def test_blank_file_path_is_invalid() -> None:
    """File Path must not be blank (NiFi's NON_BLANK_VALIDATOR)."""
    problems = StandardFileResourceService("files", file_path="  ").validate()
    assert [p.subject for p in problems if not p.valid] == ["File Path"]


def test_changed_file_is_refused(tmp_path: Path) -> None:
    """A file rewritten after it was found is not read as the one found."""
    path = _file(tmp_path)
    resource = FileResource.of(str(path))
    resource.check_unchanged()
    path.write_bytes(DATA + b"!")
    with pytest.raises(FileChangedError, match=re.escape(str(path))):
        resource.check_unchanged()
    with pytest.raises(FileChangedError, match="changed while it was being sent"):
        resource.open()
    os.unlink(path)
    with pytest.raises(FileChangedError):
        resource.check_unchanged()


def test_dot_dot_segment_is_refused(tmp_path: Path) -> None:
    """A filename with '..' cannot climb out of absolute.path (flowcore's, unlike NiFi)."""
    (tmp_path / "inner").mkdir()
    _file(tmp_path, "secret")
    service = _service("${absolute.path}/${filename}")
    attributes = {"absolute.path": str(tmp_path / "inner"), "filename": "../secret"}
    with pytest.raises(FileResourceError, match=r"has a '\.\.' segment: .*inner/\.\./secret"):
        service.get_file_resource(attributes)
    with pytest.raises(FileResourceError, match=r"'\.\.' segment"):
        service.get_file_resource({"absolute.path": str(tmp_path), "filename": "a\\..\\secret"})
    dotted = _file(tmp_path, "..data..")  # dots inside a name are no segment
    attributes = {"absolute.path": str(tmp_path), "filename": dotted.name}
    assert service.get_file_resource(attributes).path == str(dotted)


def test_base_directory_confines_the_path(tmp_path: Path) -> None:
    """With Base Directory, a path outside it (symbolic links followed) fails; one inside works."""
    base = tmp_path / "base"
    base.mkdir()
    inside = _file(base, "in")
    outside = _file(tmp_path, "out")
    (base / "link").symlink_to(outside)
    service = StandardFileResourceService("files", file_path="${p}", base_directory=str(base))
    service = service.enable(ServiceContext(service))
    assert service.get_file_resource({"p": str(inside)}).path == str(inside)
    for path in (outside, base / "link"):
        with pytest.raises(FileResourceError, match=f"^Path is outside Base Directory {base}: "):
            service.get_file_resource({"p": str(path)})


def test_base_directory_must_exist(tmp_path: Path) -> None:
    """A Base Directory that is no directory is invalid, the problem naming the property."""
    missing = str(tmp_path / "nowhere")
    problems = StandardFileResourceService("files", base_directory=missing).validate()
    assert [p.subject for p in problems if not p.valid] == ["Base Directory"]


def test_content_md5_is_of_the_file_as_found(tmp_path: Path) -> None:
    """Content-MD5 is the found bytes' MD5; a file changed since then raises instead."""
    path = _file(tmp_path)
    resource = FileResource.of(str(path))
    assert resource.content_md5() == "r4RPw2Tn9qaTcy7nKfqENQ=="
    path.write_bytes(b"other bytes")
    with pytest.raises(FileChangedError):
        resource.content_md5()


def test_registered_under_nifi_type_and_picklable() -> None:
    """NiFi's type maps onto the service, which ships to executors (pickles) as configured."""
    nifi_type = "org.apache.nifi.fileresource.service.StandardFileResourceService"
    assert service_class(nifi_type) is StandardFileResourceService
    service = StandardFileResourceService("files", **{"file-path": "/a/${b}"})
    assert pickle.loads(pickle.dumps(service)).get_property("File Path").value == "/a/${b}"
