"""A named optframe data set (``optframe datasets`` lists them), its first ``rows`` samples."""

import numpy as np
from benchopt import BaseDataset

from optframe.data import load_dataset


class Dataset(BaseDataset):
    name = "Named"
    requirements = ["optframe"]
    parameters = {"data": ["cpusmall", "a1a"], "rows": [1000]}

    def get_data(self):
        data = load_dataset(self.data, split="train")
        return {"data": data.subset(np.arange(min(self.rows, data.n_samples)))}
