#!/usr/bin/python3
"""Python side of bench/digits_int8.sh: scikit-learn's handwritten digits (load_digits, 1797
8x8 images) split 80/20, a small CNN trained on them with PyTorch, and accuracy of saved logits.

Commands:
  data DIR               DIR/train.npy, DIR/train_labels.npy, DIR/test.npy, DIR/test_labels.npy
                         (images float32 [N, 1, 8, 8] in [0, 1], labels int64 [N]); the split is
                         stratified with a fixed seed, so it is the same on every machine
  train DIR -o MODEL     writes the splits as `data` does, trains the CNN on the train split and
                         exports it to MODEL (ONNX opset 13, input "image" [batch, 1, 8, 8],
                         output "logits" [batch, 10], dynamic batch); prints its test accuracy
  accuracy LOGITS LABELS prints the percentage of rows of LOGITS.npy whose argmax is the label
The CNN: Conv 1->16 3x3 pad 1, Relu, Conv 16->32 3x3, Relu, MaxPool 2, Flatten, Linear 288->10
(7.7k parameters). Training is deterministic: fixed seeds and one thread.
"""
import argparse
import os
import sys

import numpy as np

SEED = 0
TEST_FRACTION = 0.2


def splits():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    labels = digits.target.astype(np.int64)
    train_x, test_x, train_y, test_y = train_test_split(
        images, labels, test_size=TEST_FRACTION, stratify=labels, random_state=SEED)
    return train_x, train_y, test_x, test_y


def write_splits(directory):
    os.makedirs(directory, exist_ok=True)
    train_x, train_y, test_x, test_y = splits()
    np.save(os.path.join(directory, "train.npy"), np.ascontiguousarray(train_x))
    np.save(os.path.join(directory, "train_labels.npy"), train_y)
    np.save(os.path.join(directory, "test.npy"), np.ascontiguousarray(test_x))
    np.save(os.path.join(directory, "test_labels.npy"), test_y)
    return train_x, train_y, test_x, test_y


def network():
    import torch
    from torch import nn

    class DigitsCnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
            self.conv2 = nn.Conv2d(16, 32, 3)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(32 * 3 * 3, 10)

        def forward(self, x):
            x = torch.relu(self.conv1(x))
            x = self.pool(torch.relu(self.conv2(x)))
            return self.fc(torch.flatten(x, 1))

    return DigitsCnn()


def train(directory, output, epochs, quiet):
    import torch

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    train_x, train_y, test_x, test_y = write_splits(directory)
    model = network()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    x, y = torch.from_numpy(train_x), torch.from_numpy(train_y)
    generator = torch.Generator().manual_seed(SEED)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(x), generator=generator)
        total = 0.0
        for start in range(0, len(x), 32):
            batch = order[start:start + 32]
            optimizer.zero_grad()
            loss = loss_fn(model(x[batch]), y[batch])
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        if not quiet:
            print(f"epoch {epoch + 1:3d}  loss {total / len(x):.4f}", file=sys.stderr)
    model.eval()
    with torch.no_grad():
        logits = model(torch.from_numpy(test_x)).numpy()
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    torch.onnx.export(model, torch.from_numpy(test_x[:1]), output, opset_version=13,
                      input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    print(f"torch_test_accuracy={accuracy(logits, test_y):.2f}")


def accuracy(logits, labels):
    if logits.shape[0] != labels.shape[0]:
        raise SystemExit(f"digits_train.py: {logits.shape[0]} rows of logits for {labels.shape[0]} labels")
    return 100.0 * float(np.mean(np.argmax(logits, axis=1) == labels))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    data = commands.add_parser("data")
    data.add_argument("dir")
    fit = commands.add_parser("train")
    fit.add_argument("dir")
    fit.add_argument("-o", "--output", required=True)
    fit.add_argument("--epochs", type=int, default=30)
    fit.add_argument("--quiet", action="store_true")
    score = commands.add_parser("accuracy")
    score.add_argument("logits")
    score.add_argument("labels")
    args = parser.parse_args()
    if args.command == "data":
        write_splits(args.dir)
    elif args.command == "train":
        train(args.dir, args.output, args.epochs, args.quiet)
    else:
        print(f"{accuracy(np.load(args.logits), np.load(args.labels)):.2f}")


if __name__ == "__main__":
    main()
