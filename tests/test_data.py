"""Tests for trustml_nb.data: vendored datasets, checksums, loaders and split_features."""
import gzip
import hashlib
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from trustml_nb.core import DroppedRowsWarning, SmallGroupWarning, quiet
from trustml_nb.data import (ADULT_COLUMNS, DATA_ATTRIBUTION, DATASET_SHA256, ChecksumError, Task, adult_attributes,
                             adult_task, dataset_path, dataset_summary, encode_features, german_task, load_adult, load_german,
                             split_features, verify_checksum)
from trustml_nb.groups import intersect

ADULT_INT = ['age', 'fnlwgt', 'education_num', 'capital_gain', 'capital_loss', 'hours_per_week']
ADULT_CAT = [c for c in ADULT_COLUMNS if c not in ADULT_INT + ['income']]


def quiet_adult(*args, **kwargs):
    "load_adult without the expected DroppedRowsWarning."
    with quiet(DroppedRowsWarning):
        return load_adult(*args, **kwargs)


@pytest.fixture(scope='module')
def adult():
    return quiet_adult()


@pytest.fixture(scope='module')
def german():
    return load_german()


def copy_data(tmp_path, *names):
    for n in names: shutil.copy(dataset_path(n), tmp_path / n)
    return tmp_path


# --- vendored files ---------------------------------------------------------------------------------------

def test_checksums_in_module_match_shipped_files():
    for name, sha in DATASET_SHA256.items():
        assert hashlib.sha256(dataset_path(name).read_bytes()).hexdigest() == sha, name
        assert verify_checksum(dataset_path(name)) == sha


def test_shipped_files_decompress_to_uci_row_counts():
    lines = lambda n: gzip.decompress(dataset_path(n).read_bytes()).decode('ascii').splitlines()
    assert len([l for l in lines('adult.data.gz') if l.strip()]) == 32561
    test = [l for l in lines('adult.test.gz') if l.strip()]
    assert test[0].startswith('|1x3 Cross validator') and len(test) == 1 + 16281
    assert len(lines('german.data.gz')) == 1000


def test_gzip_headers_are_deterministic():
    for name in DATASET_SHA256:
        if name.endswith('.gz'):
            head = dataset_path(name).read_bytes()[:10]
            assert head[4:8] == b'\0\0\0\0', f"{name}: gzip mtime must be 0"
            assert head[3] & 0x08 == 0, f"{name}: no file name in the gzip header"


def test_attribution():
    assert 'CC BY 4.0' in DATA_ATTRIBUTION
    assert '10.24432/C5XW20' in DATA_ATTRIBUTION and '10.24432/C5NC77' in DATA_ATTRIBUTION
    text = dataset_path('ATTRIBUTION.txt').read_text()
    for s in ('CC BY 4.0', 'Becker', 'Kohavi', 'Hofmann', '10.24432/C5XW20', '10.24432/C5NC77', 'gzip'):
        assert s in text


# --- dataset_path / verify_checksum ---------------------------------------------------------------------

def test_dataset_path_missing_file_names_file_and_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"'adult.data.gz' not found in .*" + tmp_path.name):
        dataset_path('adult.data.gz', tmp_path)
    with pytest.raises(FileNotFoundError, match="'adult.data.gz' not found"):
        load_adult(data_home=tmp_path)
    with pytest.raises(FileNotFoundError, match="'german.data.gz' not found"):
        load_german(data_home=tmp_path)


def test_verify_checksum_unknown_name(tmp_path):
    p = tmp_path / 'other.csv'; p.write_text('a\n1\n')
    with pytest.raises(ValueError, match='file name must be one of'): verify_checksum(p)
    assert verify_checksum(p, hashlib.sha256(b'a\n1\n').hexdigest()) == hashlib.sha256(b'a\n1\n').hexdigest()


def test_flipped_byte_raises_checksum_error(tmp_path):
    copy_data(tmp_path, 'adult.data.gz', 'adult.test.gz')
    p = tmp_path / 'adult.data.gz'
    data = bytearray(p.read_bytes()); data[len(data) // 3] ^= 0xFF; p.write_bytes(bytes(data))
    with pytest.raises(ChecksumError) as e: verify_checksum(p)
    msg = str(e.value)
    assert 'adult.data.gz' in msg and DATASET_SHA256['adult.data.gz'] in msg
    assert hashlib.sha256(bytes(data)).hexdigest() in msg and 'Reinstall' in msg
    assert isinstance(e.value, ValueError)
    with pytest.raises(ChecksumError, match='adult.data.gz'): load_adult('train', data_home=tmp_path)
    with pytest.raises(ChecksumError, match='adult.data.gz'): load_adult('all', data_home=tmp_path)
    quiet_adult('test', data_home=tmp_path)  # the intact test file still loads


def test_truncated_file_raises_checksum_error(tmp_path):
    copy_data(tmp_path, 'german.data.gz', 'german_codes.json')
    p = tmp_path / 'german.data.gz'
    p.write_bytes(p.read_bytes()[:-100])
    with pytest.raises(ChecksumError, match='german.data.gz'): load_german(data_home=tmp_path)


def test_altered_code_table_raises_checksum_error(tmp_path):
    copy_data(tmp_path, 'german.data.gz', 'german_codes.json')
    p = tmp_path / 'german_codes.json'
    p.write_text(p.read_text().replace('"rent"', '"lease"'))
    with pytest.raises(ChecksumError, match='german_codes.json'): load_german(data_home=tmp_path)


def test_data_home_with_intact_copies_loads(tmp_path):
    copy_data(tmp_path, 'german.data.gz', 'german_codes.json')
    assert load_german(data_home=tmp_path).equals(load_german())
    assert load_german(data_home=str(tmp_path)).shape == (1000, 23)


# --- load_adult ------------------------------------------------------------------------------------------

def test_adult_train_rows_and_dtypes(adult):
    assert adult.shape == (30162, 15)
    assert list(adult.columns) == ADULT_COLUMNS
    for c in ADULT_INT: assert adult[c].dtype == np.int64, c
    for c in ADULT_CAT: assert isinstance(adult[c].dtype, pd.CategoricalDtype), c
    assert adult['income'].dtype == bool
    assert not adult.isna().any().any()
    assert list(adult.index) == list(range(len(adult)))
    assert list(adult['sex'].cat.categories) == ['Female', 'Male']
    assert '?' not in adult['workclass'].cat.categories
    assert all(s == s.strip() for c in ADULT_CAT for s in adult[c].cat.categories)
    assert adult['income'].sum() == 7508
    assert adult['income'].mean() == pytest.approx(0.24892, abs=1e-5)


def test_adult_attrs(adult):
    a = adult.attrs
    assert a['label'] == 'income' and a['sensitive'] == ['sex', 'race']
    assert a['dropped_rows'] == 2399 and a['rows_before_dropna'] == 32561
    assert '>50K' in a['positive_label'] and 'CC BY 4.0' in a['source'] and a['split'] == 'train'


def test_adult_dropped_rows_warning():
    with pytest.warns(DroppedRowsWarning) as rec: df = load_adult('train')
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert msg == ("load_adult(split='train'): dropped 2,399 of 32,561 rows (7.4%): missing values ('?') in "
                   "workclass (1,836), occupation (1,843), native_country (583)")
    assert len(df) == 32561 - 2399


def test_adult_test_split():
    with pytest.warns(DroppedRowsWarning, match=r"dropped 1,221 of 16,281 rows"): df = load_adult('test')
    assert df.shape == (15060, 15) and df.attrs['dropped_rows'] == 1221
    assert df['income'].dtype == bool and df['income'].sum() == 3700
    raw = quiet_adult('test', dropna=False)
    assert len(raw) == 16281 and raw['income'].sum() == 3846  # the '>50K.' labels are recognised
    assert raw['age'].iloc[0] == 25  # the junk first line is skipped


def test_adult_dropna_false_keeps_rows_with_nan():
    with warnings.catch_warnings():
        warnings.simplefilter('error', DroppedRowsWarning)
        df = load_adult(dropna=False)
    assert df.shape == (32561, 15) and df.attrs['dropped_rows'] == 0
    assert df[['workclass', 'occupation', 'native_country']].isna().sum().to_dict() == \
        {'workclass': 1836, 'occupation': 1843, 'native_country': 583}
    assert df.isna().any(axis=1).sum() == 2399
    assert not df[ADULT_INT + ['income']].isna().any().any()


def test_adult_all():
    with pytest.warns(DroppedRowsWarning, match=r"load_adult\(split='all'\): dropped 3,620 of 48,842 rows"):
        df = load_adult('all')
    assert df.shape == (45222, 16) and list(df.columns) == ADULT_COLUMNS + ['split']
    assert df['split'].value_counts().to_dict() == {'train': 30162, 'test': 15060}
    assert list(df['split'].cat.categories) == ['train', 'test']
    for c in ADULT_CAT: assert isinstance(df[c].dtype, pd.CategoricalDtype), c
    assert df.attrs['not_features'] == ['split']
    assert len(quiet_adult('all', dropna=False)) == 48842


@pytest.mark.parametrize('kwargs,msg', [
    (dict(split='validation'), "split must be one of 'train', 'test', 'all'; got 'validation'"),
    (dict(split='Train'), "split must be one of"),
    (dict(dropna='yes'), "dropna must be one of True, False"),
])
def test_adult_bad_arguments(kwargs, msg):
    with pytest.raises(ValueError, match=msg): load_adult(**kwargs)


# --- load_german -----------------------------------------------------------------------------------------

def test_german_rows_dtypes_and_label(german):
    assert german.shape == (1000, 23)
    assert 'credit' not in german and german['good_credit'].dtype == bool
    assert german['good_credit'].sum() == 700
    assert german['age'].dtype == np.int64 and german['credit_amount'].dtype == np.int64
    assert isinstance(german['purpose'].dtype, pd.CategoricalDtype)
    assert not german.isna().any().any()
    assert german.attrs['label'] == 'good_credit' and german.attrs['sensitive'] == ['sex', 'age_group']
    assert german.attrs['dropped_rows'] == 0 and german.attrs['cost'] == {'bad predicted good': 5, 'good predicted bad': 1}


def test_german_decoding(german):
    first = german.iloc[0]
    assert first['status'] == '... < 0 DM' and first['purpose'] == 'radio/television'
    assert first['personal_status_sex'] == 'male : single' and first['age'] == 67 and bool(first['good_credit'])
    assert list(german['housing'].cat.categories) == ['rent', 'own', 'for free']
    assert german['foreign_worker'].value_counts().to_dict() == {'yes': 963, 'no': 37}
    coded = load_german(decode=False)
    assert coded.iloc[0]['status'] == 'A11' and coded.iloc[0]['personal_status_sex'] == 'A93'
    assert not any(str(v).startswith('A1') for v in german['status'].cat.categories)
    # decoding is a relabelling: the category codes agree
    for c in ('status', 'purpose', 'savings', 'job'):
        assert (coded[c].cat.codes == german[c].cat.codes).all(), c
    with pytest.raises(ValueError, match='decode must be one of'): load_german(decode='yes')


def test_german_derived_sensitive_attributes(german):
    assert german['sex'].value_counts().to_dict() == {'male': 690, 'female': 310}
    female = german['personal_status_sex'].str.startswith('female')
    assert (female == (german['sex'] == 'female')).all()
    assert german['age_group'].value_counts(sort=False).to_dict() == {'<25': 149, '>=25': 851}
    assert ((german['age'] < 25) == (german['age_group'] == '<25')).all()
    assert german['age_group'].cat.ordered
    rates = german.groupby('sex', observed=True)['good_credit'].mean()
    assert rates['female'] == pytest.approx(201 / 310) and rates['male'] == pytest.approx(499 / 690)


# --- split_features / dataset_summary -------------------------------------------------------------------

def test_split_features_adult(adult):
    X, y, A = split_features(adult)
    assert X.shape == (30162, 12) and y.shape == (30162,) and A.shape == (30162, 2)
    assert y.name == 'income' and list(A.columns) == ['sex', 'race']
    assert not {'income', 'sex', 'race'} & set(X.columns)


def test_split_features_german(german):
    X, y, A = split_features(german)
    assert X.shape == (1000, 18) and y.name == 'good_credit' and list(A.columns) == ['sex', 'age_group']
    assert not {'personal_status_sex', 'age', 'good_credit', 'sex', 'age_group'} & set(X.columns)
    assert 'age' in split_features(german, keep=['age'])[0]
    with pytest.raises(ValueError, match="keep may only name columns"): split_features(german, keep=['duration'])


def test_split_features_errors(adult):
    with pytest.raises(ValueError, match="df.attrs has no 'label' or 'sensitive'"):
        split_features(pd.DataFrame({'a': [1, 2]}))
    with pytest.raises(TypeError, match='df must be a pandas DataFrame'): split_features(adult.to_numpy())
    no_sex = adult.drop(columns=['sex']); no_sex.attrs = dict(adult.attrs)
    with pytest.raises(ValueError, match=r"df is missing column\(s\) \['sex'\]"): split_features(no_sex)


def test_dataset_summary(adult, german):
    s = dataset_summary(adult)
    assert s.n_rows == 30162 and s.base_rate == pytest.approx(0.24892, abs=1e-5) and s.dropped_rows == 2399
    t = s.to_frame().set_index(['attribute', 'group'])
    assert t.loc[('sex', 'Male'), 'n'] == 20380
    assert t.loc[('sex', 'Female'), 'base_rate'] == pytest.approx(0.11368, abs=1e-5)
    assert t.loc[('sex', 'Male'), 'base_rate'] == pytest.approx(0.31384, abs=1e-5)
    assert t.xs('race')['n'].sum() == 30162
    assert any('2,399' in n for n in s.notes)
    g = dataset_summary(german)
    assert g.base_rate == pytest.approx(0.7) and len(g.to_frame()) == 4


# --- adult_task: the one task builder -----------------------------------------------------------------------

def quiet_task(*args, **kwargs):
    with quiet(DroppedRowsWarning, SmallGroupWarning):
        return adult_task(*args, **kwargs)


@pytest.fixture(scope='module')
def pooled():
    return quiet_task({'base': 0.3, 'calib': 0.4, 'test': 0.3}, sensitive=('sex', 'race', 'age_group'), min_group_size=100,
                      base_model='logistic', exclude=('fnlwgt', 'age'), seed=3)


def test_task_splits_partition_the_rows(pooled, adult):
    both = quiet_adult('all')
    rows = np.concatenate([s.rows for s in pooled.splits.values()])
    assert sorted(rows) == list(range(len(both))), "the splits must partition the rows, each exactly once"
    for s in pooled.splits.values():   # every split's labels and features are those rows of the loaded table
        np.testing.assert_array_equal(s.y, both['income'].to_numpy()[s.rows].astype(int))
        np.testing.assert_array_equal(s.X['education_num'].to_numpy(), both['education_num'].to_numpy()[s.rows])
        assert list(s.X.columns) == [c for c in ADULT_COLUMNS if c not in ('income', 'sex', 'race', 'fnlwgt', 'age')]
    assert isinstance(pooled, Task) and pooled.n_rows == len(both) and pooled.dropped_rows == 3620


def test_task_groups_are_the_intersections_of_its_attributes(pooled):
    A = pd.concat([s.A for s in pooled.splits.values()], ignore_index=True)
    with quiet(SmallGroupWarning):
        G = intersect(A, min_size=100)
    got = pd.concat([s.groups for s in pooled.splits.values()], ignore_index=True)
    assert list(got.columns) == list(G.columns)
    assert got.equals(G)
    assert all(s.groups.any(axis=0).all() for s in pooled.splits.values()), "no group may be empty in a split"


def test_task_base_model_scores_are_the_model_refitted(pooled):
    from sklearn.base import clone
    m = clone(pooled.base_model).fit(pooled.base.X, pooled.base.y)
    np.testing.assert_allclose(m.predict_proba(pooled.test.X)[:, 1], pooled.test.score, atol=1e-12)
    assert pooled.base_split == 'base'


def test_task_same_seed_same_task_other_seed_other_split(pooled):
    again = quiet_task({'base': 0.3, 'calib': 0.4, 'test': 0.3}, sensitive=('sex', 'race', 'age_group'), min_group_size=100,
                       base_model='logistic', exclude=('fnlwgt', 'age'), seed=3)
    other = quiet_task({'base': 0.3, 'calib': 0.4, 'test': 0.3}, sensitive='sex', seed=4)
    np.testing.assert_array_equal(again.test.rows, pooled.test.rows)
    np.testing.assert_array_equal(again.test.score, pooled.test.score)
    assert not np.array_equal(other.test.rows, pooled.test.rows)


def test_task_official_test_and_counts(adult):
    t = quiet_task({'fit': 1000, 'cal': None}, official_test=True, sensitive=('sex', 'race_binary'), max_rows=3000, seed=0,
                   max_order=1, keep_groups=['all', 'sex=Female', 'race_binary=non-White'])
    test = quiet_adult('test')
    np.testing.assert_array_equal(t.test.y, test['income'].to_numpy().astype(int))
    assert (len(t.fit), len(t.cal), len(t.test)) == (1000, 2000, 15060)
    assert list(t.test.groups.columns) == ['all', 'sex=Female', 'race_binary=non-White']
    assert t.test.groups['all'].all()
    np.testing.assert_array_equal(t.test.groups['sex=Female'].to_numpy(), (test['sex'] == 'Female').to_numpy())


def test_task_with_a_generator_continues_the_stream():
    g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
    t = quiet_task(sensitive='sex', max_rows=500, seed=g1)
    both = quiet_adult('all')
    idx = np.sort(g2.choice(len(both), 500, replace=False))
    np.testing.assert_array_equal(t.all.y, both['income'].to_numpy()[idx].astype(int))
    assert g1.random() == g2.random(), "after the task, the caller's generator is where a direct draw would leave it"


def test_task_reports_dropped_rows_and_left_out_groups():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        adult_task(sensitive=('sex', 'race'), min_group_size=50, max_rows=2000, seed=1)
    cats = [c.category for c in caught]
    assert cats.count(DroppedRowsWarning) == 1 and cats.count(SmallGroupWarning) >= 1
    assert 'adult_task: dropped 3,620 of 48,842 rows' in str(caught[cats.index(DroppedRowsWarning)].message)


@pytest.mark.parametrize('kw,exc,msg', [
    (dict(splits={'a': 0.7, 'b': 0.7}), ValueError, "splits ask for"),
    (dict(splits={'a': None, 'b': 0.2}), ValueError, "only the last split may be"),
    (dict(splits={'a': -0.1}), ValueError, "splits['a'] must be in (0, 1]"),
    (dict(splits={'a': True}), TypeError, "splits['a'] must be a share"),
    (dict(splits=[0.5, 0.5]), TypeError, "splits must be a non-empty dict"),
    (dict(splits={'test': 0.5}, official_test=True), ValueError, "do not name a split 'test'"),
    (dict(label='wage'), ValueError, "label must be one of 'income', 'hours'"),
    (dict(sensitive=()), ValueError, "sensitive must name at least one"),
    (dict(sensitive=('sex', 'sex')), ValueError, "sensitive names an attribute twice"),
    (dict(exclude=('income',)), ValueError, "exclude names column(s) that are not features"),
    (dict(max_rows=5), ValueError, "max_rows must be in [10, inf]"),
    (dict(max_rows=2.5), TypeError, "max_rows must be an integer"),
    (dict(base_model='svm'), ValueError, "base_model must be one of 'logistic', 'hgb'"),
    (dict(base_model='hgb', label='hours'), ValueError, "base_model needs binary labels"),
    (dict(base_split='all'), ValueError, "base_split is set but base_model is None"),
    (dict(seed=-1), ValueError, "seed must be >= 0"),
    (dict(keep_groups=['sex=X']), ValueError, "keep names group(s) that do not exist"),
    (dict(max_order=5), ValueError, "max_order must be in [1, 2]"),
])
def test_task_refuses_bad_settings(kw, exc, msg):
    kw.setdefault('max_rows', 500)
    with pytest.raises(exc) as e: quiet_task(**kw)
    assert msg in str(e.value)


def test_encode_features_standardises_on_the_fit_rows_only(pooled):
    X = pooled.test.X
    fit = np.zeros(len(X), bool); fit[:500] = True
    Z, cols = encode_features(X, fit=fit)
    j = cols.index('hours_per_week')
    raw = X['hours_per_week'].to_numpy(float)
    np.testing.assert_allclose(Z[:, j], (raw - raw[:500].mean()) / raw[:500].std(ddof=1))
    onehot = [c for c in cols if c.startswith('workclass_')]
    assert len(onehot) == len(X['workclass'].cat.categories)
    np.testing.assert_array_equal(Z[:, [cols.index(c) for c in onehot]].sum(1), np.ones(len(X)))
    with pytest.raises(TypeError, match='X must be a pandas DataFrame'): encode_features(X.to_numpy())
    with pytest.raises(ValueError, match='fit must be a mask of'): encode_features(X, fit=np.ones(3, bool))


def test_adult_attributes(adult):
    A = adult_attributes(adult)
    assert ((A['age_group'] == '<30') == (adult['age'] < 30)).all()
    assert ((A['age_group'] == '50+') == (adult['age'] >= 50)).all()
    assert ((A['race_binary'] == 'White') == (adult['race'] == 'White')).all()


# --- german_task ----------------------------------------------------------------------------------------------------

def test_german_task_is_the_loader_split_by_the_seeds_permutation():
    german = load_german(); X, y, A = split_features(german)
    t = german_task({'fit': 600, 'eval': None}, seed=0)
    order = np.random.default_rng(0).permutation(1000)   # the split the monoculture lesson used before german_task existed
    np.testing.assert_array_equal(t.fit.rows, order[:600]); np.testing.assert_array_equal(t.eval.rows, order[600:])
    for s in t.splits.values():
        pd.testing.assert_frame_equal(s.X, X.iloc[s.rows].reset_index(drop=True))
        np.testing.assert_array_equal(s.y, german['good_credit'].to_numpy()[s.rows].astype(int))
        np.testing.assert_array_equal(s.A['sex'].astype(str).to_numpy(), german['sex'].astype(str).to_numpy()[s.rows])
        assert 'age' not in s.X and 'personal_status_sex' not in s.X and 'sex' not in s.X
        assert s.score is None
    assert t.n_rows == 1000 and t.dataset == 'german' and t.classes == ('bad', 'good') and t.sensitive == ('sex', 'age_group')
    assert (len(t.fit), len(t.eval), t.fit.y.mean()) == (600, 400, pytest.approx(422 / 600))


def test_german_task_groups_match_intersect_and_the_raw_age():
    german = load_german()
    t = german_task({'a': 0.5, 'b': 0.5}, seed=3)
    got = pd.concat([t.a.groups, t.b.groups], ignore_index=True)
    G = intersect(pd.concat([t.a.A, t.b.A], ignore_index=True))
    assert got.equals(G) and got.shape[1] == 8
    rows = np.concatenate([t.a.rows, t.b.rows])
    np.testing.assert_array_equal(got['age_group=<25'].to_numpy(), german['age'].to_numpy()[rows] < 25)
    np.testing.assert_array_equal(got['sex=female & age_group=<25'].to_numpy(),
                                  (german['age'].to_numpy()[rows] < 25) & (german['sex'].astype(str).to_numpy()[rows] == 'female'))
    one = german_task(sensitive='sex', keep_groups=['all', 'sex=female'])
    assert list(one.all.groups.columns) == ['all', 'sex=female'] and one.all.groups['all'].all()
    np.testing.assert_array_equal(one.all.rows, np.arange(1000))


def test_german_task_base_model_is_the_model_refitted_and_seeds_repeat():
    from sklearn.base import clone
    t = german_task({'fit': 0.6, 'test': None}, base_model='logistic', exclude=('purpose',), seed=1)
    m = clone(t.base_model).fit(t.fit.X, t.fit.y)
    np.testing.assert_allclose(m.predict_proba(t.test.X)[:, 1], t.test.score, atol=1e-12)
    assert 'purpose' not in t.test.X and t.base_split == 'fit'
    again, other = german_task({'fit': 0.6, 'test': None}, seed=1), german_task({'fit': 0.6, 'test': None}, seed=2)
    np.testing.assert_array_equal(again.test.rows, t.test.rows)
    assert not np.array_equal(other.test.rows, t.test.rows)


def test_german_task_small_groups_are_left_out_and_said():
    with pytest.warns(SmallGroupWarning, match='german_task'):
        t = german_task(min_group_size=100)
    assert t.all.groups.sum(axis=0).min() >= 100 and 'sex=female & age_group=<25' not in t.all.groups
