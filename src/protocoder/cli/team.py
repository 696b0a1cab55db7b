"""A team's review and the files other tools read: team add/list/revoke, and schema."""

from __future__ import annotations

import click

from ..schemas import SCHEMAS

_SCHEMA_LIST = "\n".join(f"  {name:<11} {what}" for name, what in SCHEMAS.items())


@click.command(epilog="\b\nSchemas:\n" + _SCHEMA_LIST)
@click.argument("name")
def schema(name: str) -> None:
    """Print the JSON Schema of one of protocoder's YAML files (NAME below).

    \b
    For an editor with a YAML language server, save it and point the file at it, e.g.:
        protocoder schema rubric > .schemas/rubric.json
        # yaml-language-server: $schema=../.schemas/rubric.json   (first line of the rubric)
    """
    from ..errors import UsageError
    from ..schemas import schema_text

    if name not in SCHEMAS:
        raise UsageError(f"unknown schema {name!r}; the schemas are: {', '.join(SCHEMAS)}")
    click.echo(schema_text(name), nl=False)
