"""Copy the benchmark summaries that lessons and notebooks read into the package's results folder (trustml_nb/results/).

The library reads benchmark numbers only from there (`trustml_nb.data.benchmark_result`), never from benchmarks/, and the
wheel ships that folder: small summaries only, no per-replication draws. The scripts named in SHIPPED call `ship()` after
writing; `make bench` and benchmarks/studies/pse_coverage/run.py call it too. Run alone: python benchmarks/ship.py [--check]
(--check exits 1 if a shipped copy differs from its source).
"""
import shutil
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PACKAGE = BENCH.parent / 'trustml_nb' / 'results'
RESULTS = BENCH / 'results'
PSE = BENCH / 'studies' / 'pse_coverage' / 'results'

# file -> the folder its benchmark script writes it to (the script is named in the comment)
SHIPPED = {
    'oath_detection.csv': RESULTS, 'oath_throughput.csv': RESULTS,                          # bench_oath.py, lesson 80
    'multicalibration_vs_mcgrad.csv': RESULTS, 'multicalibration_summary.csv': RESULTS,     # bench_multicalibration.py, lesson 50
    'omniprediction_conditional_peer.csv': RESULTS, 'omniprediction_coverage.csv': RESULTS, # bench_omniprediction.py, lesson 60
    'mifpo.json': RESULTS, 'mifpo_random.csv': RESULTS,                                     # bench_mifpo.py, lesson 70
    'pse_accuracy.csv': RESULTS, 'pse_parallel.csv': RESULTS,                               # bench_pse_accuracy.py, bench_pse_parallel.py
    **{name: RESULTS for name in ('distributive_fairness_llm_shares.csv', 'distributive_fairness_llm_position.csv',
                                  'distributive_fairness_llm_menu_mass.csv')},                   # bench_distributive_fairness.py summary, lesson 97
    **{name: PSE for name in (                                                              # the PSE coverage study, nbs/11 and lesson 10
        'pse_coverage.csv', 'pse_coverage_nonlinear.csv', 'pse_coverage_swap_binary_2000.csv', 'pse_coverage_oracle_binary.csv',
        'pse_e2_learner_binary_2000.csv', 'pse_e2_learner_binary_5000.csv', 'pse_e2_learner_threshold_2000.csv',
        'pse_e2_learner_interact_2000.csv', 'pse_coverage_configs.csv',
        'pse_learner_roles_threshold_5000.csv', 'pse_learner_roles_interact_5000.csv',
        'pse_calibrated_propensities_binary_2000.csv', 'pse_calibrated_propensities_threshold_2000.csv',
        'pse_offset_propensities_binary_2000.csv', 'pse_offset_propensities_threshold_2000.csv', 'pse_subsample_cost.csv',
        'pse_coverage_candidates_shift.csv', 'pse_pipeline_bootstrap_se_over_sd.csv',
        'pse_riesz.csv')},                                                                    # bench_pse_riesz.py (issue 40)
}


def ship(names=None)->list:
    "Copy the shipped summaries (all, or `names`) that exist into trustml_nb/results/; return the paths written."
    PACKAGE.mkdir(exist_ok=True)
    done = []
    for name in (SHIPPED if names is None else names):
        source = SHIPPED[name] / name
        if source.is_file() and (not (PACKAGE / name).is_file() or source.read_bytes() != (PACKAGE / name).read_bytes()):
            shutil.copyfile(source, PACKAGE / name); done.append(PACKAGE / name)
    return done


def stale()->list:
    "Shipped copies that differ from (or lack) their source, and files in the package folder that nothing ships."
    bad = [n for n, folder in SHIPPED.items() if not (PACKAGE / n).is_file() or (folder / n).read_bytes() != (PACKAGE / n).read_bytes()]
    return bad + sorted(p.name for p in PACKAGE.iterdir() if p.name not in SHIPPED)


if __name__ == '__main__':
    if sys.argv[1:] == ['--check']:
        bad = stale()
        print('\n'.join(bad) if bad else f"{len(SHIPPED)} shipped summaries match their sources")
        sys.exit(1 if bad else 0)
    for p in ship(): print(f"shipped {p}")
