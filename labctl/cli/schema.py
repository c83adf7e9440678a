"""``labctl schema plan|fixture``: print the JSON Schema for editors."""

from __future__ import annotations

import click


@click.command()
@click.argument("kind", type=click.Choice(["plan", "fixture"]))
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="write to a file instead")
def schema(kind: str, output: str | None) -> None:
    """Print the JSON Schema of test plans or fixtures (for YAML editors).

    With the YAML language server, add to the top of a plan:
    # yaml-language-server: $schema=<path>/plan.schema.json
    """
    from labctl.plan.schema import dumps, fixture_schema, plan_schema

    text = dumps(plan_schema() if kind == "plan" else fixture_schema())
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)
