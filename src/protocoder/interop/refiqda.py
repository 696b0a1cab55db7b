"""REFI-QDA export: a review as a QDA-XML project (``.qdpx``) or codebook (``.qdc``).

The mapping (see docs/team.md):

* the rubric is the codebook: one code per field (not codable, it only groups), with the
  field's codes nested under it (codable);
* every protocol is a case; every reviewer is a user;
* every pinned snapshot a quote rests on is a text source whose plain text is the snapshot's
  extracted text (PDF, HTML and Markdown alike), shipped under ``sources/`` in the zip;
* every quote is a ``PlainTextSelection`` of that text (``startPosition``/``endPosition``:
  Unicode character offsets in the shipped text, the end exclusive, as protocoder's own
  offsets are) coded by its reviewer with the cell's code;
* every coded cell is also a note (its source location and basis) coded by its reviewer, so
  that a code resting on no quote is not lost.

GUIDs are UUID 5 of what they name (the rubric, field and code ids, a protocol id, a
reviewer, a snapshot's hash, a quote's place), so exporting twice gives the same ids and,
with the zip's fixed timestamps, the same bytes.
"""

from __future__ import annotations

import io
import re
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from .. import __version__
from ..errors import InvalidInput, Problem
from ..model import Cell, Quote, Rubric

if TYPE_CHECKING:
    from ..storage.workspace import Review

PROJECT_NS = "urn:QDA-XML:project:1.0"
CODEBOOK_NS = "urn:QDA-XML:codebook:1.0"
_GUID_ROOT = uuid.uuid5(uuid.NAMESPACE_URL, "https://pypi.org/project/protocoder/#refi-qda")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
"""Every zip member's timestamp: the same review exports to the same bytes."""

ORIGIN = f"protocoder {__version__}"


def guid(*parts: str) -> str:
    """A stable GUID for what ``parts`` name (UUID 5 under protocoder's namespace)."""
    return str(uuid.uuid5(_GUID_ROOT, "\x1f".join(parts)))


def _moment(value: str) -> str | None:
    """A cell's ``coded_at`` as an xsd:dateTime (a date alone is taken as midnight UTC)."""
    if not value:
        return None
    return f"{value}T00:00:00Z" if len(value) == 10 else value


@dataclass(frozen=True)
class Selection:
    """One quote placed in a shipped text."""

    guid: str
    start: int
    end: int
    cell: Cell
    quote: Quote


@dataclass
class TextSourceOut:
    """One snapshot shipped as a text source."""

    guid: str
    name: str
    description: str
    text: str
    selections: list[Selection]


# --------------------------------------------------------------------------- codebook


def _codebook_codes(parent: ET.Element, rubric: Rubric, ns: str) -> dict[tuple[str, str], str]:
    """Add the rubric's fields (with their codes nested) under ``parent``; return code GUIDs by (field, code)."""
    guids: dict[tuple[str, str], str] = {}
    codes = ET.SubElement(parent, f"{{{ns}}}Codes")
    for fld in rubric.fields:
        field_el = ET.SubElement(codes, f"{{{ns}}}Code", guid=guid("field", rubric.id, fld.id),
                                 name=fld.label, isCodable="false")
        if fld.question or fld.definition:
            ET.SubElement(field_el, f"{{{ns}}}Description").text = (fld.question or fld.definition).strip()
        for code_id in fld.codes:
            code = rubric.code(code_id)
            code_guid = guid("code", rubric.id, fld.id, code_id)
            attrs = {"guid": code_guid, "name": f"{code.label} ({code.id})", "isCodable": "true"}
            if code.color:
                attrs["color"] = code.color
            code_el = ET.SubElement(field_el, f"{{{ns}}}Code", attrs)
            ET.SubElement(code_el, f"{{{ns}}}Description").text = code.definition.strip()
            guids[(fld.id, code_id)] = code_guid
    return guids


def codebook_xml(review: Review) -> bytes:
    """The rubric as a REFI-QDA codebook (``.qdc``): UTF-8 XML."""
    rubric = review.require_valid()
    ET.register_namespace("", CODEBOOK_NS)
    root = ET.Element(f"{{{CODEBOOK_NS}}}CodeBook", origin=ORIGIN)
    _codebook_codes(root, rubric, CODEBOOK_NS)
    return _serialise(root)


# --------------------------------------------------------------------------- project


def project_archive(review: Review) -> tuple[bytes, int]:
    """The review as a REFI-QDA project (``.qdpx``): a zip holding ``project.qde`` and ``sources/``.

    Every quote is judged as ``validate`` judges it (:class:`~protocoder.evidence.quotes.Verifier`):
    one that ``validate`` refuses stops the export (:class:`InvalidInput` naming the cell, with
    ``validate``'s reason); one it accepts is shipped as a selection at the place ``validate``
    found it, in the text shipped. A quote whose snapshot is not present here (which ``validate``
    notes but cannot check) has no text to point into: it is left out of the selections, and
    its cell's note still carries the code. Returns the archive and how many were left out.
    """
    from ..evidence.quotes import Verifier
    from ..evidence.snapshots import Snapshots

    rubric: Rubric = review.require_valid()
    paths = review.paths
    snapshots = Snapshots(paths)
    ET.register_namespace("", PROJECT_NS)
    ns = PROJECT_NS
    title = review.settings.title or paths.root.name
    project = ET.Element(f"{{{ns}}}Project", name=title, origin=ORIGIN)

    reviewers = sorted({sheet.reviewer for sheet in review.sheets})
    users = ET.SubElement(project, f"{{{ns}}}Users")
    for name in reviewers:
        ET.SubElement(users, f"{{{ns}}}User", guid=guid("user", name), name=name, id=name)

    codebook = ET.SubElement(project, f"{{{ns}}}CodeBook")
    code_guids = _codebook_codes(codebook, rubric, ns)

    texts: dict[str, TextSourceOut] = {}
    case_sources: dict[str, list[str]] = {}
    problems: list[Problem] = []
    cells: list[Cell] = []
    verifier = Verifier(snapshots)
    left_out = 0
    for sheet in sorted(review.sheets, key=lambda s: (s.protocol, s.reviewer)):
        protocol = review.protocol(sheet.protocol)
        by_id = {source.id: source for source in protocol.sources if source.id}
        for field_id in rubric.field_ids:
            cell = sheet.cells.get(field_id)
            if cell is None or cell.code is None:
                continue
            cells.append(cell)
            for index, quote in enumerate(cell.quotes):
                source = by_id.get(quote.source)
                check = verifier.check(quote, source, protocol_id=sheet.protocol,
                                       cell_ref=f"{sheet.protocol}/{field_id}", reviewer=sheet.reviewer, earlier=True)
                if check.refused:
                    problems.append(Problem(paths.show(sheet.path), 0, 0,
                                            f"cell {sheet.protocol}/{field_id} ({sheet.reviewer}), quote {index + 1}: "
                                            f"{check.message}"))
                    continue
                if check.span is None or source is None:
                    left_out += 1  # its snapshot is not here: validate notes it too
                    continue
                sha256, media_type = check.sha256, check.media_type
                version = source.version if sha256 == source.sha256 else next(
                    (v.version for v in source.previous if v.sha256 == sha256), "")
                text = snapshots.text(sha256, media_type).text
                source_guid = guid("snapshot", sha256)
                if source_guid not in texts:
                    texts[source_guid] = TextSourceOut(
                        source_guid, f"{protocol.name}: {source.title} ({version})",
                        f"{source.url} — {media_type}, SHA-256 {sha256}", text, [])
                    case_sources.setdefault(protocol.id, []).append(source_guid)
                selection_guid = guid("quote", sheet.protocol, field_id, sheet.reviewer, str(index), sha256)
                texts[source_guid].selections.append(
                    Selection(selection_guid, check.span.start, check.span.end, cell, quote))
    if problems:
        raise InvalidInput(problems)

    cases = ET.SubElement(project, f"{{{ns}}}Cases")
    for protocol in review.protocols:
        case = ET.SubElement(cases, f"{{{ns}}}Case", guid=guid("case", protocol.id), name=protocol.name)
        ET.SubElement(case, f"{{{ns}}}Description").text = f"protocol {protocol.id}"
        for source_guid in case_sources.get(protocol.id, ()):
            ET.SubElement(case, f"{{{ns}}}SourceRef", targetGUID=source_guid)
        for source_guid in case_sources.get(protocol.id, ()):
            for selection in texts[source_guid].selections:
                ET.SubElement(case, f"{{{ns}}}SelectionRef", targetGUID=selection.guid)

    members: dict[str, bytes] = {}
    if texts:
        sources = ET.SubElement(project, f"{{{ns}}}Sources")
        for out in texts.values():
            element = ET.SubElement(sources, f"{{{ns}}}TextSource", guid=out.guid, name=out.name,
                                    plainTextPath=f"internal://{out.guid}.txt")
            ET.SubElement(element, f"{{{ns}}}Description").text = out.description
            for selection in out.selections:
                cell = selection.cell
                attrs = {"guid": selection.guid, "name": selection.quote.text[:80],
                         "startPosition": str(selection.start), "endPosition": str(selection.end),
                         "creatingUser": guid("user", cell.reviewer)}
                when = _moment(cell.coded_at)
                if when:
                    attrs["creationDateTime"] = when
                sel = ET.SubElement(element, f"{{{ns}}}PlainTextSelection", attrs)
                ET.SubElement(sel, f"{{{ns}}}Description").text = f"{cell.protocol}/{cell.field}, {cell.reviewer}"
                _coding(sel, ns, cell, code_guids, "quote-coding", selection.guid)
            members[f"sources/{out.guid}.txt"] = out.text.encode("utf-8")

    if cells:
        notes = ET.SubElement(project, f"{{{ns}}}Notes")
        for cell in cells:
            note_guid = guid("note", cell.protocol, cell.field, cell.reviewer)
            note = ET.SubElement(notes, f"{{{ns}}}Note", guid=note_guid,
                                 name=f"{cell.protocol}/{cell.field}: {cell.code} ({cell.reviewer})",
                                 creatingUser=guid("user", cell.reviewer))
            if _moment(cell.coded_at):
                note.set("creationDateTime", _moment(cell.coded_at) or "")
            body = [f"Code: {cell.code}"]
            if cell.source:
                body.append(f"Source: {cell.source.strip()}")
            if cell.basis:
                body.append(f"Basis: {cell.basis.strip()}")
            if cell.cites:
                body.append(f"Cites: {', '.join(cell.cites)}")
            ET.SubElement(note, f"{{{ns}}}PlainTextContent").text = "\n".join(body)
            _coding(note, ns, cell, code_guids, "cell-coding", note_guid)

    members = {"project.qde": _serialise(project), **members}
    return _zip(members), left_out


def _coding(parent: ET.Element, ns: str, cell: Cell, code_guids: dict[tuple[str, str], str], kind: str,
            owner: str) -> None:
    attrs = {"guid": guid(kind, owner), "creatingUser": guid("user", cell.reviewer)}
    when = _moment(cell.coded_at)
    if when:
        attrs["creationDateTime"] = when
    coding = ET.SubElement(parent, f"{{{ns}}}Coding", attrs)
    ET.SubElement(coding, f"{{{ns}}}CodeRef", targetGUID=code_guids[(cell.field, str(cell.code))])


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
"""Characters XML 1.0 cannot carry, even escaped (a basis may hold one typed as a YAML escape)."""


def _serialise(root: ET.Element) -> bytes:
    for element in root.iter():
        if element.text:
            element.text = _NOT_XML.sub("\ufffd", element.text)
        for key, value in element.attrib.items():
            element.attrib[key] = _NOT_XML.sub("\ufffd", value)
    ET.indent(root)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, payload in members.items():
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, payload)
    return buffer.getvalue()


def write_export(review: Review, fmt: str, out: Path) -> str:
    """Write the ``qdpx`` project or the ``qdc`` codebook to ``out``; return a one-line summary."""
    from ..storage.files import atomic_write_bytes

    left_out = 0
    if fmt == "qdpx":
        payload, left_out = project_archive(review)
    else:
        payload = codebook_xml(review)
    atomic_write_bytes(out, payload)
    what = "REFI-QDA project" if fmt == "qdpx" else "REFI-QDA codebook"
    whose = "their snapshots are" if left_out != 1 else "its snapshot is"
    note = (f" ({left_out} quote{'s' if left_out != 1 else ''} left out: {whose} not present here, as validate "
            "notes)") if left_out else ""
    return f"Exported the {what} to {out}{note}"
