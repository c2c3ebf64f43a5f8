"""layers_cnn.py THREADS EPOCHS [enhanced]: a small CNN trained on random images, for
test_exec_layers.sh (cnntop exec's layer window).  Conv2d(1->4, 3x3, pad 1)
on 12x12 images, BatchNorm2d, ReLU, MaxPool2d(2), Linear(144->16), ReLU,
Dropout, Linear(16->10), CrossEntropyLoss, Adam; 320 images in batches of
8 (40 optimizer steps an epoch).  Its FLOPs per training image as PyTorch
counts them (2 x multiply-adds forward; backward as much again for the
weights' gradient and for the input's, which conv1's input needs not):
  conv1  2 x (4 x 12 x 12 outputs) x (1 x 3 x 3)  = 10368, x 2 = 20736
  fc1    2 x 16 x 144                             =  4608, x 3 = 13824
  fc2    2 x 10 x 16                              =   320, x 3 =   960
  in all 35520.
With "enhanced", the seed article's EnhancedCNN instead (cnntop's own
model, src/nn/model.h) for one epoch of 12 28x28 images in batches of 4."""
import sys

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(4 * 6 * 6, 16)
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = torch.flatten(x, 1)
        return self.fc2(self.drop(self.relu(self.fc1(x))))


def block(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]


def enhanced():
    """The seed article's EnhancedCNN: three conv blocks, three Linear."""
    return nn.Sequential(*block(1, 32), *block(32, 64), *block(64, 128), nn.Flatten(),
                         nn.Linear(1152, 256), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(256, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 10))


def main():
    torch.manual_seed(0)
    torch.set_num_threads(int(sys.argv[1]))
    big = sys.argv[3:] == ["enhanced"]
    n, side, batch = (12, 28, 4) if big else (320, 12, 8)
    data = torch.utils.data.TensorDataset(torch.randn(n, 1, side, side),
                                          torch.randint(0, 10, (n,)))
    loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True, num_workers=0)
    model = enhanced() if big else Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    step = 0
    for _ in range(1 if big else int(sys.argv[2])):
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            step += 1
            if step % 10 == 0:  # an evaluation: no gradients, not in the table
                model.eval()
                with torch.no_grad():
                    model(torch.randn(8, 1, side, side))
                model.train()
    print("done")


main()
