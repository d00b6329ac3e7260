"""The datasheets of the shipped data (trustml_nb/datasets/DATASHEET_*.md) quote counts that the shipped files give:
each number is recomputed here from the loaders and must appear in the datasheet as written."""
from pathlib import Path

import pandas as pd
import pytest

from trustml_nb.core import DroppedRowsWarning, quiet
from trustml_nb.data import load_adult, load_german

DATASETS = Path(__file__).resolve().parents[1] / 'trustml_nb' / 'datasets'


def _quiet(fn, *a, **k):
    with quiet(DroppedRowsWarning):   # load_adult warns how many rows it dropped: counted here instead
        return fn(*a, **k)


def _n(x) -> str: return f"{int(x):,}"
def _pct(x) -> str: return f"{100 * x:.1f}%"


@pytest.fixture(scope='module')
def adult():
    return {s: (_quiet(load_adult, s, dropna=False), _quiet(load_adult, s)) for s in ('train', 'test')}


def test_adult_datasheet_counts(adult):
    sheet = (DATASETS / 'DATASHEET_adult.md').read_text()
    (raw, kept), (traw, tkept) = adult['train'], adult['test']
    row = lambda *cells: '| ' + ' | '.join(cells) + ' |'
    assert row('rows', _n(len(raw)), _n(len(traw))) in sheet
    assert row('rows with a missing value (`?`)', _n(raw.isna().any(axis=1).sum()), _n(traw.isna().any(axis=1).sum())) in sheet
    assert row('rows after `load_adult` drops them (the default)', _n(len(kept)), _n(len(tkept))) in sheet
    assert row('income > \\$50K (after dropping)', f"{_n(kept.income.sum())} ({_pct(kept.income.mean())})",
               f"{_n(tkept.income.sum())} ({_pct(tkept.income.mean())})") in sheet
    assert row('exact duplicate rows (before dropping)', _n(raw.duplicated().sum()), _n(traw.duplicated().sum())) in sheet
    na = raw.isna().sum()
    assert f"workclass {_n(na.workclass)}, occupation {_n(na.occupation)}, native_country {_n(na.native_country)}" in sheet
    assert f"The {int(na.occupation - na.workclass)} rows whose occupation is" in sheet
    assert set(raw.loc[raw.occupation.isna() & raw.workclass.notna(), 'workclass']) == {'Never-worked'}
    sex = kept.sex.value_counts()
    rate = kept.groupby('sex', observed=True).income.mean()
    trate = tkept.groupby('sex', observed=True).income.mean()
    assert f"{_n(sex['Female'])} women and {_n(sex['Male'])} men; income > \\$50K for {_pct(rate['Female'])} of women" in sheet
    assert f"and {_pct(rate['Male'])} of men (test: {_pct(trate['Female'])} and {_pct(trate['Male'])})" in sheet
    race = kept.race.value_counts()
    assert (f"White {_n(race['White'])}; Black {_n(race['Black'])}; Asian-Pac-Islander {_n(race['Asian-Pac-Islander'])}; "
            f"Amer-Indian-Eskimo {_n(race['Amer-Indian-Eskimo'])};\n  Other {_n(race['Other'])}") in sheet
    both = pd.concat([kept, tkept])
    assert f"Age** {both.age.min()} to {both.age.max()}" in sheet
    us = (pd.concat([raw, traw]).native_country == 'United-States').mean()
    known = pd.concat([raw, traw]).native_country.dropna()
    assert f"{_pct(us)} of all rows have native_country United-States ({_pct((known == 'United-States').mean())} of the rows" in sheet
    assert f"99,999 in {(both.capital_gain == 99999).sum()} rows" in sheet and f"value 99 in {(both.hours_per_week == 99).sum()}" in sheet
    xt = pd.crosstab(both.relationship, both.sex)
    assert f"({_n(xt.loc['Husband', 'Male'])} men, {xt.loc['Husband', 'Female']} woman" in sheet
    assert f"({_n(xt.loc['Wife', 'Female'])} women, {xt.loc['Wife', 'Male']} man)" in sheet


def test_german_datasheet_counts():
    sheet = (DATASETS / 'DATASHEET_german.md').read_text()
    g = load_german(decode=False)
    d = load_german()
    assert len(g) == 1000 and '**1,000 rows, 20 attributes and the label**; no missing values; no duplicate rows.' in sheet
    assert g.drop(columns=['sex', 'age_group']).shape[1] == 21 and not g.isna().any().any() and not g.duplicated().any()
    good = g.good_credit.sum()
    assert f"{good} good risks" in sheet and f"and {len(g) - good} bad" in sheet
    purpose = ', '.join(f"{k} {v}" for k, v in d.purpose.value_counts().items())
    assert purpose in sheet.replace('\n  ', ' ')
    assert f"**Age** {g.age.min()} to {g.age.max()}; {(g.age < 25).sum()} applicants under 25" in sheet
    fw = g.foreign_worker.value_counts()
    assert f"{fw['A201']} yes, {fw['A202']} no" in sheet
    counts = g.personal_status_sex.value_counts()
    rates = g.groupby('personal_status_sex', observed=True).good_credit.mean()
    for code in ('A91', 'A92', 'A93', 'A94'):
        assert f"| {code} |" in sheet and f"| {counts[code]} | {rates[code]:.3f} |" in sheet, code
    assert 'A95' not in set(g.personal_status_sex.astype(str)) and '| A95 | female: single | **0** |' in sheet
    sex = g.sex.value_counts(); srate = g.groupby('sex', observed=True).good_credit.mean()
    assert f"giving {sex['female']} women and {sex['male']} men" in sheet
    assert f"(good-risk rate {srate['female']:.3f} and {srate['male']:.3f})" in sheet
    arate = g.groupby('age_group', observed=True).good_credit.mean()
    assert f"good-risk rate {arate['<25']:.3f} under 25 and {arate['>=25']:.3f} from 25" in sheet


def test_planetoid_datasheet_counts():
    import numpy as np
    from trustml_nb.unreal import load_planetoid
    sheet = (DATASETS / 'DATASHEET_planetoid.md').read_text()
    row = lambda *cells: '| ' + ' | '.join(cells) + ' |'
    stats = {}
    for name in ('cora', 'citeseer', 'pubmed'):
        g = load_planetoid(name, normalize=False)
        y, e = g.y, g.edges
        lab = y >= 0
        counts = np.bincount(y[lab])
        X = g.X.tocsr()
        dense = np.ascontiguousarray(X.toarray().astype(np.float32))
        rows = dense.view(np.dtype((np.void, dense.shape[1] * 4))).ravel()
        both = lab[e[:, 0]] & lab[e[:, 1]]
        stats[name] = dict(nodes=_n(len(y)), edges=_n(len(e)), vocab=_n(X.shape[1]), classes=str(len(counts)),
                           per_class=', '.join(str(c) for c in counts), ratio=f"{counts.max() / counts.min():.1f}",
                           isolated=str(int((np.bincount(e.ravel(), minlength=len(y)) == 0).sum())), unlabelled=str(int((~lab).sum())),
                           words=f"{np.diff(X.indptr).mean():.1f}",
                           homophily=_pct((y[e[:, 0]] == y[e[:, 1]])[both].mean()),
                           dups=str(len(rows) - len(np.unique(rows))),
                           split=f"{len(g.train_index)} / {len(g.val_index)} / {_n(len(g.test_index))}")
    c, s, p = stats['cora'], stats['citeseer'], stats['pubmed']
    for label, key in [('nodes (papers)', 'nodes'), ('undirected edges (citations, each once, no self-loops)', 'edges'),
                       ('vocabulary (features: binary bag-of-words; PubMed TF-IDF weights)', 'vocab'), ('classes (research topics)', 'classes'),
                       ('papers per class, in label order', 'per_class'), ('largest class / smallest class', 'ratio'),
                       ('nodes with no edge', 'isolated'), ('nodes with no features and no label (label -1)', 'unlabelled'),
                       ('mean words per paper', 'words'), ('edges joining two papers of the same class (edge homophily)', 'homophily'),
                       ("papers whose feature vector repeats an earlier paper's exactly", 'dups'),
                       ('public split: labelled / validation / test', 'split')]:
        assert row(label, c[key], s[key], p[key]) in sheet, (label, c[key], s[key], p[key])
    assert f"{s['isolated']} CiteSeer papers have no citation" in sheet and f"({c['dups']} in Cora, {s['dups']} in CiteSeer, {p['dups']} in PubMed)" in sheet
    X = load_planetoid('pubmed', normalize=False).X
    assert f"PubMed: the TF-IDF weight of each of {p['vocab']} words in the paper (largest weight {X.data.max():.2f})" in sheet
    assert f"{p['edges']} distinct undirected edges remain" in sheet and f"it has {X.nnz:,} non-zeros" in sheet


def test_datasheets_ship_with_the_data_and_reach_the_students_copy(tmp_path):
    "Package data `datasets/*` (pyproject) carries them in the wheel; copy_lessons puts them in the student's folder."
    from trustml_nb.course import copy_lessons
    assert '"datasets/*"' in (DATASETS.parents[1] / 'pyproject.toml').read_text()
    names = {p.name for p in copy_lessons(tmp_path / 'c')}
    assert {'DATASHEET_adult.md', 'DATASHEET_german.md', 'DATASHEET_planetoid.md'} <= names
