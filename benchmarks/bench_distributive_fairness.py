"""Distributive fairness (issue 37): the exact fair-division calculus against the peer library fairpyx, and its speed.

Part 1 (fairpyx): on 1,000 random goods-only instances (seed 37; 2 or 3 agents, 1 to 5 goods, integer values 0..100,
complete allocations: fairpyx has no discarding and no money), fairpyx 0.1 computes, and we compare:
  a. for every allocation of the first 200 instances: envy-freeness (fairpyx AgentBundleValueMatrix(normalized=False)
     .max_envy() <= 0) against our EF flag, and its egalitarian value (smallest payoff) and utilitarian value (mean payoff)
     against our `minimum` and `welfare / n`;
  b. for every instance: fairpyx's round_robin allocation, which is EF1 by a theorem (Caragiannis et al. 2019), must carry
     our EF1 flag; fairpyx's utilitarian_matching allocation must carry our USW flag (and its welfare must be our maximum).
fairpyx pins numpy 1.26 and would downgrade the project's environment, so it runs in its own virtual environment:
set FAIRPYX_PYTHON to that interpreter (e.g. `python3.11 -m venv /tmp/fairpyx_venv && /tmp/fairpyx_venv/bin/pip install
fairpyx`); fairpyx is called there through a small script over JSON on stdin/stdout. Without it, part 1 is skipped.
Part 2 (speed): median time of `fair_division` on the shipped paper instances (5 runs each).
Part 3 (`llm`, only when asked): the live harness on SmolLM2-135M-Instruct (trustml_nb.llm, greedy; answers are cached on
disk under TRUSTML_NB_CACHE, so a run cut short by a timeout resumes where it stopped). Menu setting on
all ten instances, every option in every position once (cyclic orders): exact choice probabilities, averaged per option and
per position, and the share of probability on options with each property; generative setting (one greedy answer,
max_new_tokens=80, intention 'fairest', values as sentences) on HP1 and HP2: parse rate and reasons. What a 135M model
shows is the harness and its own position bias, not distributive preferences.
Part 4 (`study`, only when asked): the harness at scale on the same model, in stages that each cover all ten instances
(generative: one greedy answer per instance x template x order x persona variation, 'lines' answer form, 8 tokens per line;
menu: exact probabilities with every option in every position, per persona and template). Answers are appended to
results/distributive_fairness_llm_answers.jsonl as they come, so the run resumes where it stopped; after each stage the
summary (results/distributive_fairness_llm_study.md, *_study_generative.csv; the menus stay in *_menu_<persona>_<template>.csv) is rewritten from everything
done so far. `summary` rewrites the summary alone (no model). Run it in the background: nice -n 15 ... study.
Part 5 (`intentions`, only when asked): the menu setting with the stated intention varied (EQ, EF, RMM, USW, none, desirable,
acceptable; persona none) for each template (sentences, table, goods), one file per stage
(results/distributive_fairness_llm_intention_<intention>_<template>.csv), so it resumes; then the summary. The summary's mass table
(*_menu_mass.csv) gives, per persona x intention x template, the probability mass on options with each property with 95 % t
intervals over the ten instances, plus a uniform chooser; and, per intention naming a property, that property's mass against the
same menu asked for the fairest allocation, paired by instance.
Part 6 (`sources`, no model): the dataset's checks (routes to the paper, the authors' other records, the calculus) as
results/distributive_fairness_sources.md.
Run: .venv/bin/python benchmarks/bench_distributive_fairness.py [llm | study | intentions | summary | sources]    (writes benchmarks/results/distributive_fairness*.{md,csv})
The machine is a shared, noisy 2-core box; timings are indicative only.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ship import ship
from trustml_nb.core import markdown_table
from trustml_nb.distributive_fairness import (MAIN_PROPERTIES, FairDivision, fair_division, generative_answers, generative_study,
                                               menu_choice_shares, menu_study, paper_instances, position_bias, study_shares)

OUT = Path(__file__).parent / 'results'

FAIRPYX_SCRIPT = r'''
import json, sys, warnings, logging
logging.disable(logging.CRITICAL)
from fairpyx import Instance, divide, AgentBundleValueMatrix
from fairpyx.algorithms import round_robin, utilitarian_matching
jobs = json.load(sys.stdin)
out = []
for job in jobs:
    vals = job['valuations']; n, m = len(vals), len(vals[0])
    agents, goods = [f"a{i}" for i in range(n)], [f"g{g}" for g in range(m)]
    inst = Instance(valuations={agents[i]: {goods[g]: vals[i][g] for g in range(m)} for i in range(n)},
                    agent_capacities=m, item_capacities=1)
    def owners(alloc): return [next(i for i in range(n) if goods[g] in alloc[agents[i]]) for g in range(m)]
    res = {'round_robin': owners(divide(round_robin, inst)), 'utilitarian_matching': owners(divide(utilitarian_matching, inst)), 'checks': []}
    for own in job.get('allocations', []):
        alloc = {agents[i]: [goods[g] for g in range(m) if own[g] == i] for i in range(n)}
        M = AgentBundleValueMatrix(inst, alloc, normalized=False)
        res['checks'].append([M.max_envy(), M.egalitarian_value(), M.utilitarian_value()])
    out.append(res)
json.dump(out, sys.stdout)
'''


def random_instances(k=1000, seed=37):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        n = int(rng.choice([2, 3])); m = int(rng.integers(1, 6 if n == 2 else 5))
        out.append(rng.integers(0, 101, size=(n, m)).tolist())
    return out


def fairpyx_part(python):
    vals = random_instances()
    fits = [FairDivision(allow_discard=False).fit(np.array(v)) for v in vals]
    jobs = []
    for k, (v, fd) in enumerate(zip(vals, fits)):
        t = fd.report_.table
        owners = t[[f'owner {g}' for g in fd.goods_]].to_numpy().tolist() if k < 200 else []
        jobs.append({'valuations': v, 'allocations': owners})
    t0 = time.perf_counter()
    done = subprocess.run([python, '-c', FAIRPYX_SCRIPT], input=json.dumps(jobs), capture_output=True, text=True, timeout=600)
    if done.returncode: raise RuntimeError(done.stderr[-2000:])
    peer = json.loads(done.stdout); peer_s = time.perf_counter() - t0
    ef_agree = ef_total = ev_agree = uv_agree = ef_true = 0
    rr_ef1 = um_usw = 0
    for fd, job, res in zip(fits, jobs, peer):
        t, n = fd.report_.table, len(fd.agents_)
        for k, (max_envy, egal, util) in enumerate(res['checks']):
            ef_total += 1
            ef_agree += bool(max_envy <= 1e-9) == bool(t['EF'].iloc[k]); ef_true += bool(t['EF'].iloc[k])
            ev_agree += abs(egal - t['minimum'].iloc[k]) < 1e-9
            uv_agree += abs(util - t['welfare'].iloc[k] / n) < 1e-9
        rr_ef1 += bool(fd.classify(res['round_robin'])['EF1'])
        um_usw += bool(fd.classify(res['utilitarian_matching'])['USW'])
    rows = [(f'EF: fairpyx max_envy <= 0 vs our EF flag ({ef_true} of them envy-free)', ef_agree, ef_total),
            ('egalitarian value vs our minimum payoff', ev_agree, ef_total),
            ('utilitarian value vs our welfare / n', uv_agree, ef_total),
            ('fairpyx round_robin allocation is EF1 by our calculus', rr_ef1, len(vals)),
            ('fairpyx utilitarian_matching allocation is USW by our calculus', um_usw, len(vals))]
    table = pd.DataFrame(rows, columns=['comparison', 'agree', 'of'])
    return table, peer_s


def speed_part():
    rows = []
    for name, inst in paper_instances().items():
        times = []
        for _ in range(5):
            t0 = time.perf_counter(); r = fair_division(inst.valuations, money=inst.money); times.append(time.perf_counter() - t0)
        rows.append({'instance': name, 'agents': len(r.agents), 'goods': len(r.goods), 'money': r.money,
                     'allocations': r.n_allocations, 'median_s': float(np.median(times))})
    return pd.DataFrame(rows)


def llm_part():
    from trustml_nb.llm import BlackBoxLM
    lm = BlackBoxLM(show_progress=False)
    t0 = time.perf_counter(); menus = []
    for name, inst in paper_instances().items():
        menus.append(menu_choice_shares(lm, inst).assign(instance=name))
    menus = pd.concat(menus, ignore_index=True); menu_s = time.perf_counter() - t0
    menus.to_csv(OUT / 'distributive_fairness_llm_menu.csv', index=False)
    print(f'menu setting done in {menu_s:.0f} s', flush=True)
    per_position = menus.groupby('position')['probability'].mean()
    per_option = menus.groupby(['instance', 'option'])['probability'].mean()
    n_orders = menus.groupby('instance')['order'].nunique()
    prop = {p: float((menus['probability'] * menus[p]).groupby(menus['instance']).sum().div(n_orders).mean()) for p in MAIN_PROPERTIES}
    t0 = time.perf_counter(); gens = []
    for name in ('HP1', 'HP2'):
        gens.append(generative_answers(lm, paper_instances()[name]).assign(instance=name))
    gens = pd.concat(gens, ignore_index=True); gen_s = time.perf_counter() - t0
    return menus, per_position, per_option, prop, gens, menu_s, gen_s


GEN_STAGES = [  # (template, order, persona), in the order they run: a cut-off run still covers every instance per stage
    ('sentences', 'original', 'none'), ('table', 'original', 'none'), ('sentences', 'goods reversed', 'none'),
    ('sentences', 'original', 'EQ'), ('sentences', 'agents reversed', 'none'), ('goods', 'original', 'none'),
    ('sentences', 'original', 'USW'), ('table', 'goods reversed', 'none'), ('table', 'agents reversed', 'none'),
    ('goods', 'goods reversed', 'none'), ('goods', 'agents reversed', 'none'), ('sentences', 'original', 'EF'),
    ('sentences', 'original', 'RMM'), ('table', 'original', 'EQ'), ('table', 'original', 'USW'), ('goods', 'original', 'EQ'),
    ('goods', 'original', 'USW')]
ANSWERS = OUT / 'distributive_fairness_llm_answers.jsonl'
STUDY_LOG = OUT / 'distributive_fairness_llm_study_log.csv'


def study_part():
    from trustml_nb.llm import BlackBoxLM
    lm = BlackBoxLM(show_progress=False); inst = list(paper_instances().values())
    menus = [('none', 'sentences'), ('EQ', 'sentences'), ('none', 'table'), ('USW', 'sentences'), ('none', 'goods')]
    for p, t in menus:   # the menu setting first: one forward pass per prompt, far cheaper than a generation
        if (OUT / f'distributive_fairness_llm_menu_{p}_{t}.csv').exists(): continue
        t0, c0 = time.perf_counter(), time.process_time()
        menu_study(lm, inst, personas=(p,), templates=(t,)).to_csv(OUT / f'distributive_fairness_llm_menu_{p}_{t}.csv', index=False)
        log_stage(f'menu {p}/{t}', t0, c0)
    for template, order, persona in GEN_STAGES:
        t0, c0 = time.perf_counter(), time.process_time()
        generative_study(lm, inst, templates=(template,), orders=(order,), personas=(persona,), path=ANSWERS)
        log_stage(f'generative {template}/{order}/{persona}', t0, c0)
        summary_part()


INTENTION_STAGES = [(i, t) for t in ('sentences', 'table', 'goods') for i in ('EQ', 'EF', 'RMM', 'USW', 'none', 'desirable', 'acceptable')]


def intention_file(intention, template): return OUT / f'distributive_fairness_llm_intention_{intention}_{template}.csv'


def intentions_part():
    "The menu setting with the stated intention varied (persona 'none'), per template; one file per stage, so it resumes."
    from trustml_nb.llm import BlackBoxLM
    lm = BlackBoxLM(show_progress=False); inst = list(paper_instances().values())
    for intention, template in INTENTION_STAGES:
        if intention_file(intention, template).exists(): continue
        t0, c0 = time.perf_counter(), time.process_time()
        menu_study(lm, inst, personas=('none',), intentions=(intention,), templates=(template,)).to_csv(intention_file(intention, template), index=False)
        log_stage(f'menu intention {intention}/{template}', t0, c0)
    summary_part()


def _mass_per_instance(menu:pd.DataFrame)->pd.DataFrame:
    "Per instance and variation: the probability mass on options with each property (orders averaged: position cancels)."
    keys = ['instance', 'persona', 'intention', 'template']
    n_orders = menu.groupby(keys)['order'].nunique()
    return pd.DataFrame({p: (menu['probability'] * menu[p]).groupby([menu[k] for k in keys]).sum().div(n_orders) for p in MAIN_PROPERTIES})


def _t_half(s:pd.Series)->float:
    "Half-width of the 95 % t interval for the mean of s (instances are the independent units)."
    from scipy.stats import t as student
    return float(s.std(ddof=1) / np.sqrt(len(s)) * student.ppf(0.975, len(s) - 1))


def _mean_ci(x:pd.DataFrame, by)->pd.DataFrame:
    "Mean over instances per group, with 95 % t intervals."
    g = x.groupby(level=by) if by else x.groupby(lambda _: 0)
    m, half = g.mean(), g.agg(_t_half)
    return pd.concat([m] + [(m[p] - half[p]).rename(f'{p}_low') for p in MAIN_PROPERTIES]
                     + [(m[p] + half[p]).rename(f'{p}_high') for p in MAIN_PROPERTIES], axis=1)


def intention_summary(menu:pd.DataFrame, by_var:pd.DataFrame):
    """The mass table by persona x intention x template with 95 % intervals over instances (the 'fairest' rows are the
    persona/template menus, unchanged), a uniform-chooser row per template, and the stated intention's own property against
    'fairest' (paired by instance). Returns the table to ship and markdown lines."""
    files = sorted(OUT.glob('distributive_fairness_llm_intention_*_*.csv'))
    allm = pd.concat([menu] + [pd.read_csv(f) for f in files], ignore_index=True)
    per = _mass_per_instance(allm)
    table = _mean_ci(per, ['persona', 'intention', 'template']).reset_index()
    # a chooser that ignores the prompt: each option 1/n, so the mass is the share of options with the property
    opts = allm.drop_duplicates(['instance', 'persona', 'intention', 'template', 'option'])
    uni = opts.groupby(['instance', 'persona', 'intention', 'template'])[list(MAIN_PROPERTIES)].mean().groupby(level='instance').first()
    uni_inst = uni
    uni = _mean_ci(uni, None).reset_index(drop=True).assign(persona='-', intention='uniform chooser', template='any')
    table = pd.concat([table, uni], ignore_index=True)[['persona', 'intention', 'template', *MAIN_PROPERTIES,
                                                       *[f'{p}_{e}' for p in MAIN_PROPERTIES for e in ('low', 'high')]]]
    md = []
    if files:
        p0 = per.xs('none', level='persona')
        rows = []
        for (intention, template), _ in p0.groupby(level=['intention', 'template']):
            if intention not in MAIN_PROPERTIES: continue
            own = p0.xs((intention, template), level=['intention', 'template'])[intention]
            base = p0.xs(('fairest', template), level=['intention', 'template'])[intention]
            d = (own - base.reindex(own.index)).dropna()
            rows.append({'intention': intention, 'template': template, 'mass on own property': own.mean(),
                         'uniform chooser': uni_inst[intention].reindex(own.index).mean(), 'same under fairest': base.mean(), 'difference': d.mean(), 'low': d.mean() - _t_half(d),
                         'high': d.mean() + _t_half(d), 'instances': len(d)})
        own = pd.DataFrame(rows)
        md = ['### The stated intention (persona none)', '',
              f'{len(files)} intention x template menus beside the \'fairest\' ones. Does asking for an allocation with property X move',
              'probability onto the options with X? Mass on the intention\'s own property, against the same menu asked for the fairest',
              'allocation; difference paired by instance, 95 % t interval over the ten instances:', '',
              markdown_table(own.round(3)), '']
        none = allm[allm['persona'] == 'none']
        first = (none.assign(first=none['position'] == 1).query('first').groupby(['intention', 'template', 'instance'])['probability'].mean()
                 .groupby(level=['intention', 'template']).agg(['mean', _t_half]).rename(columns={'mean': 'P(first listed)', '_t_half': '95 % half-width'}))
        gap = (none.groupby(['intention', 'template', 'instance', 'option'])['probability'].mean()
               .groupby(level=['intention', 'template', 'instance']).agg(lambda x: x.max() - x.min()).groupby(level=['intention', 'template']).mean())
        md += ['What the intention does move: the probability on whatever is listed first (mean over instances, 95 % t half-width), and',
               'the content signal (per menu, the largest gap between two options\' position-averaged probabilities; mean over instances):', '',
               markdown_table(first.assign(**{'content gap': gap}).round(3).reset_index()), '']
    return table, md


def log_stage(name, t0, c0):
    row = pd.DataFrame([{'stage': name, 'wall_s': round(time.perf_counter() - t0, 1), 'cpu_s': round(time.process_time() - c0, 1),
                         'load_average': round(os.getloadavg()[0], 2), 'finished_utc': time.strftime('%H:%M:%S', time.gmtime())}])
    row.to_csv(STUDY_LOG, mode='a', header=not STUDY_LOG.exists(), index=False)
    print(row.to_string(index=False, header=False), flush=True)


class _Replay:
    "Answers from the JSON-lines log only (the summary never runs the model): a variation not in the log is skipped."
    def settings(self): return {'model': json.loads(ANSWERS.read_text().splitlines()[0])['key'][0]}
    def generate(self, prompt, max_new_tokens=None): raise KeyError('not in the log')


def summary_part():
    inst = list(paper_instances().values()); done = [json.loads(l)['key'] for l in ANSWERS.read_text().splitlines() if l.strip()]
    stages = sorted({(k[2], k[3], k[4]) for k in done}, key=lambda s: GEN_STAGES.index(s) if s in GEN_STAGES else 99)
    gen = pd.concat([generative_study(_Replay(), [i for i in inst if any(k[1] == i.name and (k[2], k[3], k[4]) == s for k in done)],
                                      templates=(s[0],), orders=(s[1],), personas=(s[2],), path=ANSWERS) for s in stages], ignore_index=True)
    gen.to_csv(OUT / 'distributive_fairness_llm_study_generative.csv', index=False)
    menu_files = sorted(OUT.glob('distributive_fairness_llm_menu_*_*.csv'))
    menu = pd.concat([pd.read_csv(f) for f in menu_files], ignore_index=True) if menu_files else None
    fmt = lambda d: d.round(3)
    cols = ['answers', 'parsed', 'parse_rate', 'parse_low', 'parse_high'] + [c for p in MAIN_PROPERTIES for c in (p, f'{p}_low', f'{p}_high')]
    md = ['# Distributive fairness: the harness at scale on SmolLM2-135M-Instruct (greedy, CPU)', '',
          'What a 135M model can show: whether the harness runs end to end, how often its answers can be read at all, and its',
          'position bias on a menu. It says nothing about the distributive preferences of the frontier models the paper studies.', '',
          f'## Generative setting: {len(gen)} greedy answers ({gen["instance"].nunique()} instances; stages: '
          + '; '.join('/'.join(s) for s in stages) + ')', '',
          'Parse rate and, among parsed answers, the share with each property; 95 % Wilson intervals (answers treated as',
          'independent; variations of one instance are correlated, so the intervals are if anything too narrow).', '',
          markdown_table(fmt(study_shares(gen)[cols])), '', '### By variation', '',
          markdown_table(fmt(study_shares(gen, by=['template', 'order', 'persona'])[['template', 'order', 'persona'] + cols[:5] + list(MAIN_PROPERTIES)])), '',
          '### Why answers were unparseable (most common reasons, per good name collapsed)', '',
          markdown_table(gen.loc[gen['status'] == 'unparseable', 'reason'].str.replace(r"Good [A-F]", 'Good X', regex=True)
                         .str.replace(r"\(.*\)", '(...)', regex=True).value_counts().head(6).rename_axis('reason').reset_index()), '']
    if menu is not None:
        pb = position_bias(menu)
        n_orders = menu.groupby(['instance', 'persona', 'template'])['order'].nunique()
        mass = {p: (menu['probability'] * menu[p]).groupby([menu['instance'], menu['persona'], menu['template']]).sum().div(n_orders)
                for p in MAIN_PROPERTIES}
        by_var = pd.DataFrame({p: v.groupby(level=['persona', 'template']).mean() for p, v in mass.items()}).reset_index()
        by_var, intent_md = intention_summary(menu, by_var)
        spread = menu.groupby(['instance', 'persona', 'template', 'option'])['probability'].mean().groupby(['instance', 'persona', 'template'])
        md += [f'## Menu setting: {len(menu)} (order, option) rows ({menu.groupby(["instance", "persona", "template"]).ngroups} instance x variation menus)', '',
               'Exact next-token probability of each option number; every option in every position once. Position bias: mean',
               'probability on whatever sits in each position against the uniform 1/n (standard error over instances).', '',
               markdown_table(fmt(pb)), '',
               'Probability mass on options with each property (mean over instances), by variation:', '',
               markdown_table(fmt(by_var)), '', *intent_md,
               f'Content signal: per menu, the largest gap between two options\' position-averaged probabilities: mean '
               f'{spread.agg(lambda s: s.max() - s.min()).mean():.3f}, max {spread.agg(lambda s: s.max() - s.min()).max():.3f}.', '']
    if STUDY_LOG.exists():
        md += ['## Time per stage (shared 2-core machine)', '', markdown_table(pd.read_csv(STUDY_LOG)), '']
    # the summaries the lessons read: written here, copied into the package by ship() (benchmarks/ship.py)
    shares = pd.concat([study_shares(gen).assign(variation='all'),
                        study_shares(gen, by=['template', 'order', 'persona']).assign(
                            variation=lambda d: d['template'] + ' / ' + d['order'] + ' / persona ' + d['persona'])
                        .drop(columns=['template', 'order', 'persona'])], ignore_index=True)
    shares[['variation'] + cols].round(4).to_csv(OUT / 'distributive_fairness_llm_shares.csv', index=False)
    if menu is not None:
        pb.round(4).to_csv(OUT / 'distributive_fairness_llm_position.csv', index=False)
        by_var.round(4).to_csv(OUT / 'distributive_fairness_llm_menu_mass.csv', index=False)
    (OUT / 'distributive_fairness_llm_study.md').write_text('\n'.join(md))
    ship(['distributive_fairness_llm_shares.csv', 'distributive_fairness_llm_position.csv', 'distributive_fairness_llm_menu_mass.csv'])
    return gen, menu


def sources_part():
    "What the shipped instances and human shares were checked against (no model): the dataset's records, as tables."
    import json as _json
    from trustml_nb.data import dataset_path
    from trustml_nb.distributive_fairness import INSTANCES_FILE, human_share_consistency, human_share_records, instance_checks
    inst = paper_instances()
    checks = _json.loads(dataset_path(INSTANCES_FILE).read_text())['checks']
    records = pd.concat([human_share_records(i) for i in inst.values() if i.human_allocations], ignore_index=True)
    nested = pd.concat([human_share_consistency(i) for i in inst.values() if i.human_shares], ignore_index=True)
    md = ['# Distributive fairness: what the paper instances and human shares were checked against', '',
          'Written by `bench_distributive_fairness.py sources` from the shipped dataset (no model). Nothing here is checked against',
          "the paper's own tables, which could not be read; the routes tried are listed first.", '']
    md += sum(([f'## {k}', '', v, ''] for k, v in checks.items()), [])
    md += ['## Per instance', '', markdown_table(instance_checks().reset_index()), '',
           '## Recorded shares against the recorded allocations (classified by the calculus)', '', markdown_table(records), '',
           f'## Nested property sets (share of the subset <= share of the superset): {int(nested["holds"].sum())} of {len(nested)} hold', '',
           markdown_table(nested[~nested['holds']]), '']
    (OUT / 'distributive_fairness_sources.md').write_text('\n'.join(md))


def main():
    OUT.mkdir(exist_ok=True)
    if 'sources' in sys.argv[1:]:
        sources_part(); print((OUT / 'distributive_fairness_sources.md').read_text()); return
    if 'study' in sys.argv[1:]:
        study_part(); return
    if 'intentions' in sys.argv[1:]:
        intentions_part(); return
    if 'summary' in sys.argv[1:]:
        summary_part(); print((OUT / 'distributive_fairness_llm_study.md').read_text()); return
    if 'llm' in sys.argv[1:]:
        menus, per_position, per_option, prop, gens, menu_s, gen_s = llm_part()
        menus.to_csv(OUT / 'distributive_fairness_llm_menu.csv', index=False)
        gens.to_csv(OUT / 'distributive_fairness_llm_generative.csv', index=False)
        md = ['# Distributive fairness: live harness on SmolLM2-135M-Instruct (greedy)', '',
              f'Menu setting, 10 instances, every option in every position once ({len(menus)} (order, option) rows, {menu_s:.0f} s):', '',
              markdown_table(per_position.rename('mean probability').reset_index()), '',
              'spread of the per-option probability (averaged over positions) within an instance: '
              f'{per_option.groupby(level=0).agg(lambda s: s.max() - s.min()).describe()[["min", "mean", "max"]].round(3).to_dict()}', '',
              'probability mass on options with each property (mean over instances): ' + ', '.join(f'{p} {v:.3f}' for p, v in prop.items()), '',
              f'Generative setting (HP1, HP2; {gen_s:.0f} s): parse rate {(gens["status"] == "parsed").mean():.2f}', '',
              markdown_table(gens[['instance', 'status', 'reason']]), '', f'load average: {os.getloadavg()[0]:.2f}', '']
        (OUT / 'distributive_fairness_llm.md').write_text('\n'.join(md))
        print('\n'.join(md))
        return
    python = os.environ.get('FAIRPYX_PYTHON')
    md = ['# Distributive fairness: calculus vs fairpyx, and speed', '']
    if python:
        table, peer_s = fairpyx_part(python)
        table.to_csv(OUT / 'distributive_fairness_fairpyx.csv', index=False)
        md += ['## Agreement with fairpyx 0.1 (1,000 random goods-only instances, seed 37; per-allocation checks on the first 200)', '',
               markdown_table(table), '', f'fairpyx subprocess time: {peer_s:.1f} s', '']
        print(table.to_string(index=False))
    else:
        md += ['fairpyx part skipped: set FAIRPYX_PYTHON to an interpreter with fairpyx installed.', '']
        print('FAIRPYX_PYTHON not set: fairpyx comparison skipped')
    speed = speed_part()
    speed.to_csv(OUT / 'distributive_fairness_speed.csv', index=False)
    md += ['## Speed on the paper instances (median of 5)', '', markdown_table(speed), '',
           f'load average: {os.getloadavg()[0]:.2f}', '']
    (OUT / 'distributive_fairness.md').write_text('\n'.join(md))
    print(speed.to_string(index=False))


if __name__ == '__main__':
    main()
