"""``dpcore fit``: a private treatment rule from a trial CSV and its data dictionary, through the
release pipeline (:func:`dpcore.release.release`), recorded in the dataset's ledger."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import CliError, check_room, dataset_name, need, open_ledger, read_bytes, total_text


def cmd_fit(args: argparse.Namespace) -> None:
    """Fit a private treatment rule (:func:`dpcore.release.release`), write the rule file, then
    record it in the ledger."""
    (read_dictionary,) = need("dpcore.data.dictionary.read", ("read_dictionary",), "fit")
    from ..release import ReleaseError, ReleasePlan, release

    if args.seed is not None and not args.not_private:
        raise CliError(
            "--seed makes the noise reproducible, so the release has no privacy "
            "guarantee: add --not-private (the rule is then titled NOT PRIVATE, the "
            "seed is recorded in it and this dataset's total becomes inf), or drop --seed"
        )
    if args.evaluation != "ipw" and not args.evaluate:
        raise CliError(
            f"--evaluation {args.evaluation} chooses how --evaluate evaluates the rule: "
            "add --evaluate EPS_EVAL"
        )
    if args.model_covariates and args.evaluation != "aipw" and args.learner != "plug-in":
        raise CliError(
            "--model-covariates chooses the covariates of an outcome model: add "
            "--evaluation aipw (the evaluation's) or --learner plug-in (the rule's)"
        )
    if args.evaluate and not 0.0 < args.fit_share < 1.0:
        raise CliError(
            f"--fit-share must be between 0 and 1 (the share of patients the rule is "
            f"fitted on), got {args.fit_share:g}"
        )
    data = read_bytes(args.data)
    d = read_dictionary(Path(args.dictionary))
    if d.larger_is_better is None:
        raise CliError(
            f"the dictionary {args.dictionary} does not say which outcome is better: "
            'add the field "larger_is_better": true (or false) to it'
        )
    arms = None
    if args.arms:
        arms = _arms(args.arms)
        if not d.arms:
            raise CliError("--arms needs the dictionary to list the treatment's arms (its levels)")
    names = tuple(c.strip() for c in (args.model_covariates or "").split(",") if c.strip())
    if args.learner == "plug-in":
        given = [
            flag
            for flag, hit in (
                ("--gamma", args.gamma is not None),
                ("--weight-bound", args.weight_bound is not None),
                ("--C", args.C != 0.0),
                ("--evaluation aipw", args.evaluation != "ipw"),
            )
            if hit
        ]
        if given:
            raise CliError(
                f"{', '.join(given)}: DP-OWL's settings; --learner plug-in has none (drop them)"
            )
    plan = ReleasePlan(
        epsilon=args.epsilon,
        learner=args.learner,
        perturbation=args.perturbation,
        epsilon_eval=args.evaluate,
        fit_share=args.fit_share,
        evaluation=args.evaluation,
        gamma=args.gamma,
        weight_bound=args.weight_bound,
        C=args.C,
        model_covariates=names,
        arms=arms,
        reference=args.reference,
        seed=args.seed,
        not_private=("released with --not-private",) if args.not_private else (),
    )
    try:
        made = release(data, d, plan)
    except ReleaseError as exc:
        flag = {
            "arms": "--arms",
            "weight_bound": "--weight-bound",
            "model_covariates": "--model-covariates",
            "reference": "--reference",
        }.get(exc.setting or "")
        raise CliError(f"{flag}: {exc}" if flag else str(exc)) from None
    _write_and_record(args, data, made)


def _write_and_record(args: argparse.Namespace, data: bytes, made: Any) -> None:
    """Write the rule file beside --out, record the release in the ledger, then put the file
    in place with the ledger's record in it (the dataset is charged the plan's cost)."""
    import os
    import tempfile

    (write_rule,) = need("dpcore.owl.rule_file", ("write_rule",), "fit")
    out = Path(args.out)
    if out.is_dir():  # os.replace would fail only after the ledger was charged
        raise CliError(
            f"--out {args.out} is a directory: give the rule file's name (e.g. "
            f"{out / 'rule.json'}); nothing was released or recorded"
        )
    ledger = open_ledger(args.ledger, data, dataset_name(args))
    check_room(ledger, made.plan.cost, not made.private)
    # The file is written first (to a temporary name beside it), then the ledger charged,
    # then the file put in place: a fit whose --out cannot be written spends nothing.
    try:
        fd, tmp = tempfile.mkstemp(
            dir=out.parent if str(out.parent) else ".", prefix=".dpcore-", suffix=".json"
        )
        os.close(fd)
        write_rule(made.to_dict(), tmp)
    except OSError as exc:
        raise CliError(
            f"cannot write --out {args.out}: {exc.strerror or exc}; nothing was "
            "released or recorded"
        ) from None
    try:
        made = made.record(ledger, "dpcore fit")
        write_rule(made.to_dict(), tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # a rule file is for sharing: the usual mode, not mkstemp's
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)
    if made.evaluation is not None:  # the first answer, then the rule's verdict
        print(made.evaluation.summary())
    print(
        f"wrote {args.out}: epsilon={total_text(made.entry.epsilon)} spent; this dataset's "
        f"total is {total_text(made.totals[0])}"
    )


def _arms(arms: str) -> tuple[str, str]:
    """The two arms of ``--arms TREATED,CONTROL``."""
    labels = [a.strip() for a in arms.split(",") if a.strip()]
    if len(labels) != 2:
        raise CliError(
            f"--arms takes two arms separated by a comma (the treated one first), got {arms!r}"
        )
    return labels[0], labels[1]
