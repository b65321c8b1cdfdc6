"""optframe's generators: AID's Set A regression data and two Gaussian classes (labels +1/-1)."""

from benchopt import BaseDataset

from optframe.data import make_classification_svm, make_lad_set_a


class Dataset(BaseDataset):
    name = "Simulated"
    requirements = ["optframe"]
    parameters = {"task": ["regression", "classification"], "n": [2000], "m": [20]}

    def get_data(self):
        seed = self.get_seed(use_repetition=False)
        if self.task == "regression":
            data = make_lad_set_a(self.n, self.m, random_state=seed)
        else:
            data = make_classification_svm(n=self.n, m=self.m, random_state=seed)
        return {"data": data}
