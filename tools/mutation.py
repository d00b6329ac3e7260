"""Mutation testing of the numeric cores with mutmut (pinned in the dev extra): `make mutation`.

For every module below, a scratch copy of the repository gets a `[tool.mutmut]` table that mutates only that module and
runs only its fast targeted tests; `mutmut run` is then limited to the module's numeric core functions (mutant-name
globs). The score per module (killed / (killed + survived); timeouts count as killed and are listed) goes to
benchmarks/results/mutation.md and .csv, with every surviving mutant's name so it can be shown with `mutmut show`.

    .venv/bin/python tools/mutation.py                    # every module (tens of minutes on 2 cores)
    .venv/bin/python tools/mutation.py --only pse omniprediction --max-children 2
"""
import argparse
import csv
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
T = 'tests/test_{}.py::{}'.format

# module: (numeric core functions or Class.method names, targeted tests (node ids))
def _FEDFACT_TESTS():   # the tests that pin the fedfact constraints and protocols (a fresh list per module)
    return [T('fedfact', n) for n in ('test_matrices_reproduce_direct_rates', 'test_randomised_classifier_rates_are_linear',
                                           'test_binary_dp_constraints_are_negatives', 'test_eop_is_the_papers_per_class_equal_opportunity',
                                           'test_pairwise_is_subgroup_over_largest_share', 'test_zero_duals_identity_and_shift_invariance',
                                           'test_binary_reduction_is_a_threshold_rule', 'test_mu_sign_direction', 'test_projection_and_smoothing',
                                           'test_metrics_from_counts_match_direct', 'test_post_meets_budgets_on_fitted_data')]


MODULES = {
    'pse': (['gmf_weights', '_check_props', 'gmf_estimate', '_segments', '_crossfit', '_effects_tables'],
            [T('pse', n) for n in ('test_propensities_as_one_2d_array_equal_the_list', 'test_general_weights_equal_propensity_forms', 'test_gmf_xxx_is_aipw', 'test_gmf_001_is_tchetgen_shpitser',
                                   'test_segments_collapse_equal_stages', 'test_oracle_point_estimate_and_weight_means',
                                   'test_weights_positive_only_on_their_group_and_sn_identity', 'test_binary_eif_reproduces_the_exact_truth',
                                   'test_standard_errors_and_intervals_match_the_exact_efficient_se',
                                   'test_every_nuisance_is_predicted_only_on_rows_its_model_never_saw', 'test_clipping_is_honoured',
                                   'test_low_level_errors', 'test_boolean_propensities_are_refused')]),
    'multicalibration': (['_weighted_errors', 'mc_table', 'mc_error', 'mc_error_to_truth', '_smece_sigma', '_smooth_ece',
                          'smooth_ece', 'weighted_smooth_ece'],
                         [T('multicalibration', n) for n in ('test_mc_error_matches_brute_force', 'test_mc_table_in_group_error_is_the_groups_ece',
                                                             'test_metrics_take_y_true_y_prob_groups', 'test_smooth_ece_known_values',
                                                             'test_smooth_ece_matches_its_definition', 'test_smooth_ece_with_its_mass_next_to_zero',
                                                             'test_mc_error_to_truth_brute_force_and_fit_reaches_truth')]),
    'omniprediction': (['quantile_fit', '_cell_window', '_augmented_quantiles', 'GroupConformal.fit', 'GroupConformal.predict', 'coverage_report'],
                       [T('omniprediction', n) for n in ('test_group_coverage', 'test_finite_sample_guarantee_in_every_group',
                                                         'test_conformal_coverage_is_exact_at_the_sharp_sample_size', 'test_qr_is_not_guaranteed_with_small_groups',
                                                         'test_group_quantiles_match_brute_force', 'test_conditional_thresholds_are_exact_fits',
                                                         'test_conditional_on_a_partition_is_split_conformal_per_cell', 'test_quantile_fit_matches_sklearn',
                                                         'test_no_empty_sets_when_disallowed', 'test_coverage_report_values',
                                                         'test_qr_report_lists_each_groups_coefficient')]),
    'gam_explain': (['_view', '_gains', 'csr', 'msr', 'mcr', 'cc', 'fr', 'shap_regression', 'shap_classification', '_pmf_int',
                     '_integer_values', 'csr_tol', 'mcr_tol', 'msr_tol'],
                    [T('gam_explain', n) for n in ('test_csr_msr_mcr_match_bruteforce_500', 'test_reasons_all_component_kinds', 'test_duality_all_subsets',
                                                   'test_c5_boundary_case', 'test_one_sided_regression_threshold_equals_classification',
                                                   'test_cc_matches_bruteforce_500', 'test_shap_regression_matches_bruteforce_500_and_efficiency',
                                                   'test_shap_classification_matches_bruteforce_500_and_efficiency', 'test_fr_matches_bruteforce_500',
                                                   'test_fr_continuous_vs_dense_sampling',
                                                   'test_tolerance_queries_match_bruteforce_500')]),
    'fairdice': (['Welfare.__call__', 'Welfare.marginal', 'Welfare.kstar', 'Welfare.conj', 'Divergence.f', 'Divergence.finv', 'Divergence.wstar',
                  'Divergence.f0star', 'Divergence.divergence', '_mu_of', '_dual_fg', '_dual_init', '_dual_hess', '_newton', '_policy_from_d'],
                 [T('fairdice', n) for n in ('test_primal_and_dual_agree_to_1e6', 'test_fixed_mu_routes_agree_and_proposition_1',
                                             'test_nash_optimum_has_mu_equal_one_over_J', 'test_nsw_scale_invariance', 'test_f0star_is_the_conjugate',
                                             'test_welfare_conjugate_term_and_kstar', 'test_counterexample_regularised_and_beta_table',
                                             'test_large_beta_returns_the_behaviour_policy', 'test_lbfgs_dual_agrees_with_primal',
                                             'test_dual_hessian_is_the_derivative_of_the_dual_gradient',
                                             'test_weighted_nsw_kstar_and_conjugate_by_grid_search', 'test_softmax_weights_do_not_overflow',
                                             'test_divergence_weights_on_torch_tensors_match_numpy')]),
    # fedfact was split along its seams (issue 34): constraints and counts, then protocols; same tests
    'fedfact_constraints': (['fairness_matrices', '_global_matrices', '_local_matrices', 'confusion_matrices', 'disparities',
                             'direct_disparities', 'cost_matrix', '_check_duals'], _FEDFACT_TESTS()),
    'fedfact_protocols': (['_positivity_shift', '_project_l1_ball', 'dual_scale', '_smooth_max', '_client_post_grads', '_rprop_step'],
                          _FEDFACT_TESTS()),
}

BAD_INPUT = {'pse': 'pse', 'multicalibration': 'multicalibration', 'omniprediction': 'omniprediction', 'gam_explain': 'gam',
             'fairdice': 'fairdice', 'fedfact_constraints': 'fedfact', 'fedfact_protocols': 'fedfact'}   # tests/test_bad_input_<name>.py: validation mutants are scored too
for _m, (_fns, _tests) in MODULES.items(): _tests.append(f'tests/test_bad_input_{BAD_INPUT[_m]}.py')

# surviving mutants read and judged: equivalent (no input can tell them apart), or a message-only change the tests do not pin.
# They stay in the score (killed / (killed + survived)); `score_without_equivalent` leaves the equivalent ones out.
EQUIVALENT = {
    # (the three fedfact entries judged before the split are gone: mutant numbers changed with the new modules; judge them again)
    'trustml_nb.fairdice.x__dual_hess__mutmut_42': "np.minimum(y, 1) inside np.where(y < 0, ...): only entries with y < 0 are used, where min(y, 0) = min(y, 1)",
    'trustml_nb.fairdice.x__newton__mutmut_19': "the stall counter starts at 1: Newton stops one stalled step earlier; the answer is the same to the tolerance",
    'trustml_nb.fairdice.x__newton__mutmut_59': "lstsq(...)[1] in the except branch: np.linalg.solve of a damped SPD matrix never raises LinAlgError here",
    'trustml_nb.gam_explain.x_csr_tol__mutmut_26': "'<' for '<=' against tolerance + 1e-12 (the paper's delta): differs only when the sum equals tolerance + 1e-12 exactly",
    'trustml_nb.gam_explain.x_msr_tol__mutmut_131': "take = zeros(..., None): float 0/1 instead of bool; only its truth value is read",
    'trustml_nb.multicalibration.x__smooth_ece__mutmut_31': "bisection bracket [1e-4, 2] for [1e-4, 1]: the root is below 1 (smECE <= 1/2), 25 halvings reach it either way",
    'trustml_nb.pse.x__effects_tables__mutmut_121': "phi_tv with + for -: the two terms live on disjoint rows (x = 1, x = 0) and each has mean 0 in the sample (m1, m0 are the group means), so std(a + b) = std(a - b) exactly",
    'trustml_nb.omniprediction.x_coverage_report__mutmut_70': "check_scalar(kind=None): check_scalar tests `kind is int`, so any other kind means float",
    'trustml_nb.omniprediction.x_quantile_fit__mutmut_44': "check_scalar(closed='XXneitherXX'): any value other than both/left/right makes both bounds strict, as 'neither' does",
    'trustml_nb.omniprediction.x__cell_window__mutmut_14': "one more free row in the LP window: each LP's solution is checked for optimality on all rows (complementary slackness) and the window widened until it is",
}
NOTES = {   # mutants scored by hand-checked evidence rather than a clean test failure
    'trustml_nb.multicalibration.x_smooth_ece__mutmut_12': "drops smooth_ece's n_grid bound: the sweep's n_grid=10**6 call builds a 10^6 x 250 kernel; "
                                                            "mutmut timed it out, and its fork-free re-run was stopped by hand at 6 GB RSS after 2 min (scored as a timeout = killed)",
}
MESSAGE_ONLY = {
    'trustml_nb.fairdice.xǁWelfareǁmarginal__mutmut_23': "XX around the max-min message (a substring check cannot see it)",
    'trustml_nb.gam_explain.x_shap_regression__mutmut_7': "XX around the dist-and-background message",
    'trustml_nb.gam_explain.x_msr_tol__mutmut_110': "the cell count printed in the too-large-DP message",
    'trustml_nb.pse.x__effects_tables__mutmut_68': "truth None instead of NaN in the functionals table for a functional without a known truth (shown as empty either way)",
    'trustml_nb.pse.x__crossfit__mutmut_69': "'abcdefgh' for 'ABCDEFGH' in a part label of a message",
}

KILLED = {'killed', 'timeout', 'caught by type check'}
IGNORE = shutil.ignore_patterns('.git', '.venv', '__pycache__', '*.pyc', 'test-output', '_docs', '_html', '.ipynb_checkpoints',
                                '.pytest_cache', 'mutants', 'benchmarks', 'tutorials')


def _glob(module: str, fn: str) -> str:
    "mutmut 3's mutant-name glob for a function or a Class.method."
    if '.' in fn:
        cls, meth = fn.split('.')
        return f"trustml_nb.{module}.x\u01c1{cls}\u01c1{meth}__mutmut_*"
    return f"trustml_nb.{module}.x_{fn}__mutmut_*"


def _scratch(module: str, tests: list, workdir: Path) -> Path:
    d = workdir / module
    if d.exists(): shutil.rmtree(d)
    shutil.copytree(ROOT, d, ignore=IGNORE, symlinks=True)
    pyproject = (d / 'pyproject.toml').read_text()
    pyproject = re.sub(r'\n\[tool\.mutmut\][^\[]*', '\n', pyproject)
    pyproject += ('\n[tool.mutmut]\nsource_paths = ["trustml_nb"]\n'
                  f'only_mutate = ["trustml_nb/{module}.py"]\n'
                  f'pytest_add_cli_args_test_selection = {tests!r}\n'.replace("'", '"') +
                  'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:xdist", "-q"]\n'
                  'use_git_change_detection = false\n'
                  # docstrings (a bare string on its own line) cannot change behaviour: their mutants are equivalent, not scored
                  + "do_not_mutate_patterns = ['^\\s*\"[^\"]*\"\\s*$', '^\\s*\"\"\"']\n")
    (d / 'pyproject.toml').write_text(pyproject)
    return d


def recheck_timeouts(d: Path, env: dict, tests: list, names: list, limit: int = 900) -> dict:
    "Re-run each timed-out mutant without mutmut's fork (pytest in mutants/, MUTANT_UNDER_TEST set): killed, survived or a real timeout."
    out = {}
    for name in names:
        try:
            rc = subprocess.run([sys.executable, '-m', 'pytest', '-x', '-q', '-p', 'no:cacheprovider', '-p', 'no:xdist', *tests],
                                cwd=d / 'mutants', env={**env, 'MUTANT_UNDER_TEST': name}, capture_output=True, timeout=limit).returncode
            out[name] = 'survived' if rc == 0 else 'killed'
        except subprocess.TimeoutExpired:
            out[name] = 'timeout'
        print(f'  re-run of {name}: {out[name]}', flush=True)
    return out


def run_module(module: str, workdir: Path, max_children: int, sample: int = 0, score_only: bool = False, recheck_survivors: bool = False) -> dict:
    "Run mutmut over the module's sample in a fresh scratch copy; score_only: score the scratch copy of an earlier run again."
    fns, tests = MODULES[module]
    d = workdir / module if score_only else _scratch(module, tests, workdir)
    # one thread per BLAS/OpenMP/torch pool: mutmut forks a child per mutant, and a child forked from a parent whose thread
    # pools are running can deadlock (seen: children asleep on a futex until mutmut's timeout, which would count as killed)
    env = {**os.environ, 'TRUSTML_NB_PROGRESS': '0', 'MPLBACKEND': 'Agg', 'PYTHONPATH': '', 'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1',
           'OPENBLAS_NUM_THREADS': '1'}
    env.pop('TRUSTML_NB_SLOW', None)
    mutmut = [str(ROOT / '.venv' / 'bin' / 'mutmut')] if (ROOT / '.venv' / 'bin' / 'mutmut').exists() else [sys.executable, '-m', 'mutmut']
    t0 = time.time()
    log = workdir / f'{module}.log'
    names = [_glob(module, f) for f in fns]
    rc = 0
    if sample and score_only:
        keys = json.loads((d / 'mutants' / 'trustml_nb' / f'{module}.py.meta').read_text())['exit_code_by_key']
        pool = sorted(k for k in keys if any(fnmatch.fnmatch(k, g) for g in names)); pool_size = len(pool)
        names = sorted(pool, key=lambda k: hashlib.sha256(k.encode()).hexdigest())[:sample]
    elif sample:
        # generate the mutants (and the per-test stats) with a filter that matches nothing, then run a fixed sample of them
        with open(log, 'w') as fh:
            subprocess.call([*mutmut, 'run', '--max-children', str(max_children), f'trustml_nb.{module}.x_no_such_function__mutmut_*'],
                            cwd=d, env=env, stdout=fh, stderr=subprocess.STDOUT)
        keys = json.loads((d / 'mutants' / 'trustml_nb' / f'{module}.py.meta').read_text())['exit_code_by_key']
        pool = sorted(k for k in keys if any(fnmatch.fnmatch(k, g) for g in names))
        pool_size = len(pool)
        names = sorted(pool, key=lambda k: hashlib.sha256(k.encode()).hexdigest())[:sample]   # deterministic sample
    if not score_only:
        with open(log, 'a') as fh:
            rc = subprocess.call([*mutmut, 'run', '--max-children', str(max_children), *names],
                                 cwd=d, env=env, stdout=fh, stderr=subprocess.STDOUT)
    out = subprocess.run([*mutmut, 'results', '--all', 'true'], cwd=d, env=env, capture_output=True, text=True).stdout
    status = {}
    for line in out.splitlines():
        m = re.match(r'\s*(\S+__mutmut_\d+): (.+)$', line)
        if m and any(fnmatch.fnmatch(m.group(1), g) for g in names): status[m.group(1)] = m.group(2).strip()
    rechecked = recheck_timeouts(d, env, tests, [k for k, v in status.items() if v == 'timeout' and k not in NOTES])
    status.update(rechecked)
    if recheck_survivors:       # tests written after the run: copy them in and re-run the survivors against them (no mutmut fork)
        for sub in ('tests', 'mutants/tests'):
            for f in (ROOT / 'tests').glob('*.py'): shutil.copy2(f, d / sub / f.name)
        again = recheck_timeouts(d, env, tests, [k for k, v in status.items() if v == 'survived'])
        status.update(again); rechecked = {**rechecked, **again}
    secs = time.time() - t0                     # mutmut's run and the re-runs of its timeouts
    counts = {}
    for s in status.values(): counts[s] = counts.get(s, 0) + 1
    killed = sum(v for k, v in counts.items() if k in KILLED)
    survived = counts.get('survived', 0)
    scored = killed + survived
    se = (killed / scored * (1 - killed / scored) / scored) ** 0.5 if scored else float('nan')
    eq = [k for k, v in status.items() if v == 'survived' and k in EQUIVALENT]
    score_eq = round(killed / (scored - len(eq)), 3) if scored > len(eq) else float('nan')
    return dict(module=module, functions=' '.join(fns), equivalent=len(eq), score_without_equivalent=score_eq, pool=pool_size if sample else len(status), mutants=len(status), killed=killed, survived=survived,
                timeout=counts.get('timeout', 0), timeouts_rechecked=len(rechecked), no_tests=counts.get('no tests', 0),
                other=sum(v for k, v in counts.items() if k not in KILLED | {'survived', 'no tests'}),
                score=round(killed / scored, 3) if scored else float('nan'), score_se=round(se, 3), seconds=round(secs), mutmut_rc=rc,
                survivors=' '.join(sorted(k for k, v in status.items() if v == 'survived')))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--only', nargs='*', default=None, choices=list(MODULES))
    ap.add_argument('--max-children', type=int, default=2)
    ap.add_argument('--sample', type=int, default=40, help='mutants per module, a fixed hash-ordered sample of the pool (0: every mutant)')
    ap.add_argument('--workdir', default='/tmp/trustml_mutation')
    ap.add_argument('--recheck-survivors', action='store_true', help="with --score-only: re-run the survivors against the current tests/ (tests added after the run)")
    ap.add_argument('--render-only', action='store_true', help='only re-write mutation.md from mutation.csv')
    ap.add_argument('--score-only', action='store_true', help='do not run mutmut: score the scratch copies of an earlier run (re-running its timeouts)')
    ap.add_argument('--out', default=str(ROOT / 'benchmarks' / 'results' / 'mutation'))
    args = ap.parse_args()
    workdir = Path(args.workdir); workdir.mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    rows = []
    old = {}
    if out.with_suffix('.csv').exists():          # keep earlier modules' rows when only some are re-run
        with open(out.with_suffix('.csv')) as fh: old = {r['module']: r for r in csv.DictReader(fh)}
    for module in [] if args.render_only else (args.only or list(MODULES)):
        r = run_module(module, workdir, args.max_children, args.sample, args.score_only, args.recheck_survivors)
        if args.score_only:
            first = str(old[module]['seconds']).split(' ')[0] if module in old else '?'
            r['seconds'] = f"{first} + {r['seconds']} (re-scoring{': survivors re-run against later tests' if args.recheck_survivors else ''})"
        r['load_average'] = round(os.getloadavg()[0], 2)
        print(f"{module}: {r['killed']}/{r['killed'] + r['survived']} killed (score {r['score']}), {r['no_tests']} without tests, "
              f"{r['seconds']}s, load {r['load_average']}", flush=True)
        old[module] = r
        render(old, out, list(r))
    if args.render_only: render(old, out, None)


def render(old: dict, out: Path, fieldnames):
    "Write mutation.csv (when fieldnames are given) and mutation.md from the rows of every module run so far."
    rows = [old[m] for m in MODULES if m in old]
    if fieldnames is None: fieldnames = list(dict.fromkeys(k for x in rows for k in x))
    for x in rows:                                   # the judged-equivalent survivors of every row, this run's or an earlier one's
        eq = [n for n in str(x.get('survivors', '')).split() if n in EQUIVALENT]
        k, sv = int(float(x['killed'])), int(float(x['survived']))
        x['equivalent'] = len(eq); x['score_without_equivalent'] = round(k / (k + sv - len(eq)), 3) if k + sv > len(eq) else ''
    for extra in ('equivalent', 'score_without_equivalent'):
        if extra not in fieldnames: fieldnames.append(extra)
    with open(out.with_suffix('.csv'), 'w', newline='') as fh:
        w = csv.DictWriter(fh, fieldnames=fieldnames, extrasaction='ignore', restval=''); w.writeheader(); w.writerows(rows)
    lines = ['# Mutation testing of the numeric cores (mutmut 3, `make mutation`)', '',
             'Score = killed / (killed + survived). A mutant that mutmut timed out is re-run without mutmut\'s fork (pytest with MUTANT_UNDER_TEST',
             'set, `timeouts_rechecked`) and scored by that run; only a re-run that also times out counts as a timeout (= killed). Only the listed',
             "functions are mutated (docstrings and bare string lines excluded), and only the module's targeted tests run, with its",
             "bad-input sweep (tests/test_bad_input_<module>.py; tests/badinput.py accepts errors raised in mutmut's copy of the package).",
             "`pool` is every mutant of those functions; `mutants` the fixed sample run (hash order; all",
             "when equal), so `score_se` is the sampling standard error. Survivors: `cd /tmp/trustml_mutation/<module> && mutmut show <name>`.", '',
             '| module | functions | pool | mutants | killed | survived | timeouts | no tests | score | score_se | equivalent survivors | score without them | seconds | load |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    lines += [f"| {x['module']} | {x['functions']} | {x.get('pool', x['mutants'])} | {x['mutants']} | {x['killed']} | {x['survived']} | {x['timeout']} ({x.get('timeouts_rechecked', '')} re-run) | "
              f"{x['no_tests']} | {x['score']} | {x.get('score_se', '')} | {x.get('equivalent', '')} | {x.get('score_without_equivalent', '')} | {x['seconds']} | {x['load_average']} |" for x in rows]
    lines += ['', '## Surviving mutants', ''] + [f"- {x['module']}: {x['survivors'] or 'none'}" for x in rows]
    surv = {n for x in rows for n in str(x['survivors']).split()}
    lines += ['', '## Survivors read and judged', '', '| mutant | judged | why |', '|---|---|---|']
    lines += [f"| {n} | equivalent | {w} |" for n, w in EQUIVALENT.items() if n in surv]
    lines += [f"| {n} | message or display only | {w} |" for n, w in MESSAGE_ONLY.items() if n in surv]
    lines += [f"| {n} | timeout | {w} |" for n, w in NOTES.items()]
    out.with_suffix('.md').write_text('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
