"""``labctl schema plan|fixture|run-record``: print a JSON Schema (editors, report consumers)."""

from __future__ import annotations

import click


@click.command()
@click.argument("kind", type=click.Choice(["plan", "fixture", "run-record"]))
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="write to a file instead")
def schema(kind: str, output: str | None) -> None:
    """Print the JSON Schema of test plans or fixtures (for YAML editors), or of the run
    records that `labctl report --format json` writes.

    With the YAML language server, add to the top of a plan:
    # yaml-language-server: $schema=<path>/plan.schema.json
    """
    from labctl.plan.schema import dumps, fixture_schema, plan_schema

    if kind == "run-record":
        from labctl.report.schema import run_record_schema

        text = dumps(run_record_schema())
    else:
        text = dumps(plan_schema() if kind == "plan" else fixture_schema())
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)
