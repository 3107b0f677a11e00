"""`exo eval`: measure the models on your own documents, and the packet against plain RAG
(registered in exocortex.cli)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import psycopg
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from exocortex import config
from exocortex.cli.output import console, err, fail
from exocortex.db import admin_url, connect, role_url, writer
from exocortex.eval import compare_models as evaluation
from exocortex.eval import ground_truth as extraction_truth
from exocortex.eval import people_corpus, shadow


@click.group("eval")
def eval_group() -> None:
    """Measure the models on a sample of your own documents, and the packet against plain RAG."""


@eval_group.command("corpus")
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="The folder to write."
)
@click.option(
    "--size",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Families (employers: size - 1, at least 2).",
)
@click.option("--seed", type=int, default=16, show_default=True, help="The same seed writes the same corpus.")
def corpus_cmd(out: Path, size: int, seed: int) -> None:
    """Write a generated corpus of people with known ground truth (for `exo eval extraction CORPUS`)."""
    world = people_corpus.generate(size, seed)
    people_corpus.write(world, out)
    console.print(people_corpus.summary(world, out))


@eval_group.command("extraction")
@click.argument("corpus", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--configuration",
    "configurations",
    multiple=True,
    type=click.Choice(list(extraction_truth.CONFIGURATIONS)),
    help="With CORPUS: only this configuration (repeatable; default: all).",
)
@click.option(
    "--sample", "n", type=click.IntRange(min=1), default=20, show_default=True, help="Documents to sample."
)
@click.option("--seed", type=int, default=1, show_default=True, help="The same seed draws the same sample.")
@click.option("--models", "models_", help="Comma-separated model names (default: the models.chat setting's).")
@click.option("--judge", help="A model that checks each kept relation against its text.")
@click.option(
    "--endpoint", help="Base URL (.../v1) for every model instead of models.chat's (one server, many models)."
)
@click.option("--judge-endpoint", help="Base URL for the judge (default: as for the models).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the table.")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the JSON here (a .json path) and a Markdown rendering next to it (.md).",
)
def extraction_cmd(
    corpus: Path | None,
    configurations: tuple[str, ...],
    n: int,
    seed: int,
    models_: str | None,
    judge: str | None,
    endpoint: str | None,
    judge_endpoint: str | None,
    as_json: bool,
    output: Path | None,
) -> None:
    """Run a stratified sample of documents through each model at production settings.

    Reports per model entities and relations per document, grounding rate, dropped items,
    empty extractions, errors, truncated replies and docs/hour; with --judge, relation
    correctness and the reversed-direction rate. Writes nothing to the database.

    With CORPUS (a folder `exo eval corpus` wrote): build its graph in a scratch database
    for each configuration (model only, two-pass, NER, structural edges) and report relation
    precision and recall against its ground truth (person to person apart), entity type
    accuracy and seconds per window (--endpoint, --json and --output apply).
    """
    if corpus is not None:
        _extraction_against_truth(corpus, configurations, endpoint, as_json, output)
        return
    if output is not None and output.suffix != ".json":
        fail(f"--output must name a .json file (the Markdown goes next to it), got {output}")
    models = [m for m in (models_ or "").split(",") if m.strip()]
    try:
        with (
            writer(config.load(), "exo-eval") as conn,
            Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                console=err, transient=True,
            ) as bar,
        ):  # fmt: skip
            tasks: dict[str, int] = {}

            def progress(model: str, done: int, total: int) -> None:
                if model not in tasks:
                    tasks[model] = bar.add_task(escape(model), total=total)
                bar.update(tasks[model], completed=done)

            report = evaluation.evaluate(
                conn, models, n, seed, judge, endpoint, judge_url=judge_endpoint, progress=progress
            )
    except evaluation.EvalProblem as exc:
        fail(str(exc))
    except psycopg.OperationalError as exc:
        fail(f"cannot connect to the database: {str(exc).strip().splitlines()[0]}")
    data = report.to_json()
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(data, indent=2) + "\n")
        markdown = output.with_suffix(".md")
        markdown.write_text(evaluation.render_markdown(report))
        err.print(f"wrote {escape(str(output))} and {escape(str(markdown))}", soft_wrap=True)
    for result in report.results:
        for key, message in result.first_error.items():
            judged = key.startswith("judge ")
            error_class = key.removeprefix("judge ")
            count = (result.judge.failures if judged and result.judge else result.errors)[error_class]
            what = "judge calls" if judged else f"of {result.sampled} documents"
            err.print(
                f"[yellow]warning:[/yellow] {escape(result.model)}: {count} {what} failed with "
                f"{escape(error_class)}, the first: {escape(message)}",
                soft_wrap=True,
            )
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        console.print(evaluation.render_table(report))
        judged = f"; judge {report.judge}" if report.judge else ""
        console.print(escape(f"sample: {evaluation.describe_sample(report)}{judged}"), soft_wrap=True)


def _extraction_against_truth(
    corpus: Path, configurations: tuple[str, ...], endpoint: str | None, as_json: bool, output: Path | None
) -> None:
    """`exo eval extraction CORPUS`: exocortex.eval.ground_truth."""
    try:
        results = extraction_truth.evaluate(
            config.load(), corpus, configurations or tuple(extraction_truth.CONFIGURATIONS), endpoint,
            progress=lambda line: err.print(escape(line), soft_wrap=True),
        )  # fmt: skip
    except extraction_truth.EvalProblem as exc:
        fail(str(exc))
    except psycopg.OperationalError as exc:
        fail(f"cannot connect to the database: {str(exc).strip().splitlines()[0]}")
    data = {"corpus": str(corpus), "results": [r.to_json() for r in results]}
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(data, indent=2) + "\n")
        err.print(f"wrote {escape(str(output))}", soft_wrap=True)
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        console.print(extraction_truth.render_table(results))


@eval_group.command("shadow")
@click.argument("questions", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--k",
    type=click.IntRange(1, 200),
    default=10,
    show_default=True,
    help="Chunks each plain-RAG baseline returns.",
)
@click.option(
    "--budget",
    type=click.IntRange(200, 100000),
    default=4000,
    show_default=True,
    help="The context packet's token budget.",
)
@click.option(
    "--workspace",
    "workspaces",
    multiple=True,
    help="Only this workspace, for questions that name none (repeatable; default: all).",
)
@click.option(
    "--json",
    "output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the report as JSON here.",
)
def shadow_cmd(
    questions: Path, k: int, budget: int, workspaces: tuple[str, ...], output: Path | None
) -> None:
    """Compare the context packet with plain RAG (vector and BM25 top-k) on a file of QUESTIONS.

    QUESTIONS has one JSON object a line: {question, expect: [answer strings], stale: [strings
    that must not be given as current], sources: [document paths], withheld: [deferred
    material], as_of: YYYY-MM-DD, workspaces: [...], kind}. Reports per question and overall
    tokens, whether each context holds the expected answers, gives a stale one as current or
    leaks withheld material, the expected sources it cites, and latency. Scoring is string
    matching only; nothing is written to the database.
    """
    try:
        loaded = shadow.load_questions(questions)
    except shadow.ShadowProblem as exc:
        fail(str(exc))
    cfg = config.load()
    try:
        with (
            connect(admin_url(cfg), "exo-eval-shadow", autocommit=True) as admin,
            connect(role_url(cfg, "exo_reader"), "exo-eval-shadow", autocommit=True) as reader,
            Progress(
                TextColumn("questions"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                console=err, transient=True,
            ) as bar,
        ):  # fmt: skip
            task = bar.add_task("questions", total=len(loaded))
            report = shadow.evaluate(
                admin, reader, loaded, questions.name, k, budget, workspaces,
                progress=lambda done, _total: bar.update(task, completed=done),
            )  # fmt: skip
    except shadow.ShadowProblem as exc:
        fail(str(exc))
    except (
        psycopg.errors.UndefinedTable,
        psycopg.errors.InvalidSchemaName,
        psycopg.errors.UndefinedFunction,
    ):
        fail("the database is not migrated: run `exo migrate` first")
    except psycopg.OperationalError as exc:
        fail(f"cannot connect to the database: {str(exc).strip().splitlines()[0]}")
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        err.print(f"wrote {escape(str(output))}", soft_wrap=True)
    console.print(shadow.render_questions(report))
    console.print(shadow.render_overall(report))
    missing = [r.outcomes["vector"].unavailable for r in report.results if r.outcomes["vector"].unavailable]
    if missing:
        err.print(
            f"[yellow]warning:[/yellow] no vector baseline for {len(missing)} of {len(report.results)} "
            f"questions: {escape(missing[0])}",
            soft_wrap=True,
        )


COMMANDS = [eval_group]
