"""Convert the Planetoid citation graphs (Cora, CiteSeer) into the compact files trustml_nb ships.

Source: the `ind.<name>.*` files of github.com/kimiyoung/planetoid (MIT licence, (c) 2016 Zhilin Yang), read from a local
mirror (nothing is downloaded). PubMed is not converted: the mirror lacks `ind.pubmed.allx`.

Output, per graph, `trustml_nb/datasets/planetoid_<name>.npz` with
  feature_indptr, feature_indices: the binary bag-of-words features as a CSR pattern (all stored values are 1);
  n_features, labels (int8, -1 for CiteSeer's 15 test-range nodes that have no features or label in the source);
  edges (int32, shape (m, 2), each undirected edge once, i < j, no self-loops);
  train_index, val_index, test_index: the public split (20 labelled per class, 500 validation, 1000 test).
The processing is Kipf & Welling's (and PyG's `read_planetoid_data`): features = vstack(allx, tx) with the test rows put
back in the order of `test.index`; CiteSeer's missing test indices get empty feature rows.

    python benchmarks/make_planetoid.py /work/.mirror/kimiyoung+planetoid/repo/.git
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


def convert(git_dir, name):
    obj = {p: pickle.loads(_read(git_dir, name, p), encoding='latin1') for p in ('x', 'y', 'tx', 'ty', 'allx', 'ally', 'graph')}
    test_index = np.array([int(v) for v in _read(git_dir, name, 'test.index').decode().split()])
    test_sorted = np.sort(test_index)
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
    features = features.tocsr()
    labels = np.where(labels_1hot.sum(1) > 0, labels_1hot.argmax(1), -1).astype(np.int8)
    n = features.shape[0]
    rows, cols = [], []
    for i, nbrs in obj['graph'].items():
        for j in nbrs: rows.append(i); cols.append(j)
    e = np.array([rows, cols]).T
    e = e[(e[:, 0] < n) & (e[:, 1] < n) & (e[:, 0] != e[:, 1])]   # CiteSeer's graph names a few nodes beyond the features
    e = np.unique(np.sort(e, axis=1), axis=0).astype(np.int32)
    assert set(np.unique(features.data)) <= {1.0}, 'Planetoid features are binary'
    n_train = obj['y'].shape[0]
    train_index = np.arange(n_train); val_index = np.arange(n_train, n_train + 500)
    path = OUT / f'planetoid_{name}.npz'
    np.savez_compressed(path, feature_indptr=features.indptr.astype(np.int32), feature_indices=features.indices.astype(np.int16),
                        n_features=np.int32(features.shape[1]), labels=labels, edges=e,
                        train_index=train_index.astype(np.int16), val_index=val_index.astype(np.int16),
                        test_index=np.sort(test_index).astype(np.int16))
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    print(f"{path.name}: {n} nodes, {features.shape[1]} features, {len(e)} undirected edges, "
          f"{labels.max() + 1} classes, {n_labelled_missing} nodes without features/label; "
          f"{path.stat().st_size:,} bytes; sha256 {sha}")


if __name__ == '__main__':
    git_dir = sys.argv[1] if len(sys.argv) > 1 else '/work/.mirror/kimiyoung+planetoid/repo/.git'
    for name in ('cora', 'citeseer'): convert(git_dir, name)
