"""Convert the Planetoid citation graphs (Cora, CiteSeer, PubMed) into the compact files trustml_nb ships.

Source: the `ind.<name>.*` files of github.com/kimiyoung/planetoid (MIT licence, (c) 2016 Zhilin Yang), read from a local
mirror (nothing is downloaded).

PubMed: the mirror lacks `ind.pubmed.allx` (the TF-IDF rows of the 18,717 non-test nodes; over the mirror's 4 MiB file
limit). Those rows are read from `pubmed.feature`, a whitespace-separated text dump (6 significant digits) of Kipf &
Welling's processed PubMed feature matrix (19,717 x 500, rows in the processed order), inside `data/pubmed.7z` of
github.com/yottacto/parameter-server (commit 3cdb22c584aaab4534c94e4eb5dc2a229d037038); extract it first (7z x, or
py7zr). The conversion keeps the exact Planetoid values wherever the mirror has them (x: the 60 labelled rows, tx: the
1,000 test rows) and takes only allx[60:] from the dump, after checking the dump against x, tx and ally (the check
fails loudly otherwise). Everything else (labels, graph, split) comes from the Planetoid files.

Output, per graph, `trustml_nb/datasets/planetoid_<name>.npz` with
  feature_indptr, feature_indices: the binary bag-of-words features as a CSR pattern (all stored values are 1);
  n_features, labels (int8, -1 for CiteSeer's 15 test-range nodes that have no features or label in the source);
  edges (int32, shape (m, 2), each undirected edge once, i < j, no self-loops);
  train_index, val_index, test_index: the public split (20 labelled per class, 500 validation, 1000 test).
The processing is Kipf & Welling's (and PyG's `read_planetoid_data`): features = vstack(allx, tx) with the test rows put
back in the order of `test.index`; CiteSeer's missing test indices get empty feature rows.

PubMed's features are TF-IDF weights, not binary, and are stored column-wise as a codebook: `feature_codebook` (the
distinct float32 values of each column, columns one after another, `feature_codebook_size` values per column) and
`feature_codes` (uint16: the position of each stored value in its column's codebook), which is lossless for float32 and
a third smaller than storing the values.

    python benchmarks/make_planetoid.py /work/.mirror/kimiyoung+planetoid/repo/.git [path/to/pubmed.feature]
"""
import hashlib
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

OUT = Path(__file__).resolve().parents[1] / 'trustml_nb' / 'datasets'


def _read(git_dir, name, part):
    return subprocess.run(['git', f'--git-dir={git_dir}', 'show', f'HEAD:data/ind.{name}.{part}'],
                          check=True, capture_output=True).stdout


def _pubmed_allx(obj, test_index, feature_txt):
    "allx for PubMed: the exact x rows, then rows 60..18716 of the text dump, after checking the dump against x, tx, ally."
    dump = np.loadtxt(feature_txt, dtype=np.float64)
    x, tx = obj['x'].toarray(), obj['tx'].toarray()
    n_all = obj['ally'].shape[0]
    assert dump.shape == (n_all + tx.shape[0], x.shape[1]), dump.shape
    err_x, err_tx = np.abs(dump[:len(x)] - x).max(), np.abs(dump[test_index] - tx).max()   # the dump is in the processed order
    assert err_x < 1e-6 and err_tx < 1e-6, (err_x, err_tx)
    print(f"pubmed.feature agrees with Planetoid's x (max |diff| {err_x:.1e}) and tx ({err_tx:.1e}); "
          f"{int((dump != 0).sum()):,} non-zeros")
    allx = np.vstack([x, dump[len(x):n_all]]).astype(np.float32)
    return sp.csr_matrix(allx)


def _codebook(features):
    "Column-wise codebook of a CSR matrix's float32 values: (codebook, codebook sizes per column, uint16 codes)."
    cols, vals = features.indices.astype(np.int64), features.data.astype(np.float32)
    key = (cols << 32) | vals.view(np.uint32).astype(np.int64)
    uniq, inv = np.unique(key, return_inverse=True)
    ucol = uniq >> 32
    sizes = np.bincount(ucol, minlength=features.shape[1])
    codes = inv - np.concatenate([[0], np.cumsum(sizes)[:-1]])[cols]
    assert codes.max() < 2 ** 16
    book = (uniq & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    assert np.array_equal(book[np.concatenate([[0], np.cumsum(sizes)[:-1]])[cols] + codes], vals)   # lossless
    return book, sizes.astype(np.int32), codes.astype(np.uint16)


def convert(git_dir, name, feature_txt=None):
    parts = ('x', 'y', 'tx', 'ty', 'ally', 'graph') + (() if name == 'pubmed' else ('allx',))
    obj = {p: pickle.loads(_read(git_dir, name, p), encoding='latin1') for p in parts}
    test_index = np.array([int(v) for v in _read(git_dir, name, 'test.index').decode().split()])
    test_sorted = np.sort(test_index)
    if name == 'pubmed': obj['allx'] = _pubmed_allx(obj, test_index, feature_txt)
    tx, ty = obj['tx'], obj['ty']
    n_labelled_missing = 0
    if name == 'citeseer':     # isolated test nodes absent from tx/ty: empty rows, unknown label
        full = np.arange(test_sorted.min(), test_sorted.max() + 1)
        tx_ext = sp.lil_matrix((len(full), tx.shape[1])); tx_ext[test_sorted - test_sorted.min(), :] = tx; tx = tx_ext
        ty_ext = np.zeros((len(full), ty.shape[1])); ty_ext[test_sorted - test_sorted.min(), :] = ty; ty = ty_ext
        n_labelled_missing = len(full) - len(test_sorted)
    features = sp.vstack([obj['allx'], tx]).tolil()
    labels_1hot = np.vstack([obj['ally'], ty])
    features[test_index, :] = features[test_sorted, :]
    labels_1hot[test_index, :] = labels_1hot[test_sorted, :]
    features = features.tocsr(); features.sort_indices()
    labels = np.where(labels_1hot.sum(1) > 0, labels_1hot.argmax(1), -1).astype(np.int8)
    n = features.shape[0]
    rows, cols = [], []
    for i, nbrs in obj['graph'].items():
        for j in nbrs: rows.append(i); cols.append(j)
    e = np.array([rows, cols]).T
    e = e[(e[:, 0] < n) & (e[:, 1] < n) & (e[:, 0] != e[:, 1])]   # CiteSeer's graph names a few nodes beyond the features
    e = np.unique(np.sort(e, axis=1), axis=0).astype(np.int32)
    binary = name != 'pubmed'
    if binary: assert set(np.unique(features.data)) <= {1.0}, 'Planetoid features are binary (Cora, CiteSeer)'
    n_train = obj['y'].shape[0]
    train_index = np.arange(n_train); val_index = np.arange(n_train, n_train + 500)
    path = OUT / f'planetoid_{name}.npz'
    values = {}
    if not binary:
        book, sizes, codes = _codebook(features)
        values = dict(feature_codebook=book, feature_codebook_size=sizes, feature_codes=codes)
    np.savez_compressed(path, feature_indptr=features.indptr.astype(np.int32), feature_indices=features.indices.astype(np.int16),
                        n_features=np.int32(features.shape[1]), labels=labels, edges=e, **values,
                        train_index=train_index.astype(np.int16), val_index=val_index.astype(np.int16),
                        test_index=np.sort(test_index).astype(np.int16))
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    print(f"{path.name}: {n} nodes, {features.shape[1]} features, {len(e)} undirected edges, "
          f"{labels.max() + 1} classes, {n_labelled_missing} nodes without features/label; "
          f"{path.stat().st_size:,} bytes; sha256 {sha}")


if __name__ == '__main__':
    git_dir = sys.argv[1] if len(sys.argv) > 1 else '/work/.mirror/kimiyoung+planetoid/repo/.git'
    for name in ('cora', 'citeseer'): convert(git_dir, name)
    if len(sys.argv) > 2: convert(git_dir, 'pubmed', sys.argv[2])
    else: print('pubmed: skipped (give the path of the extracted pubmed.feature as the second argument)')
