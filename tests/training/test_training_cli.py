"""``nlgeval-train`` subcommands on models report bad input by name, with exit status 2."""

from __future__ import annotations

from nlgeval_training.cli import main
from nlgeval_training.errors import UsageError


def test_export_names_a_missing_checkpoint_folder(tmp_path, capsys):
    missing = tmp_path / "no-checkpoint"
    assert main(["export", str(missing), str(tmp_path / "out")]) == 2
    assert f"checkpoint folder {str(missing)!r} does not exist" in capsys.readouterr().err


def test_card_names_a_comparison_without_a_history_file(tmp_path, capsys):
    evaluation = tmp_path / "evaluation.json"
    evaluation.write_text("{}")
    assert main(["card", str(tmp_path), "--evaluation", str(evaluation), "--comparison", "continual"]) == 2
    assert "--comparison 'continual': write MODE=HISTORY.json" in capsys.readouterr().err


def test_the_command_line_raises_the_errors_module_usage_error():
    from nlgeval_training import cli

    assert cli.UsageError is UsageError
