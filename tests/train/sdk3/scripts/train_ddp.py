"""A PyTorch DDP script for a ModelTrainer job with ``Torchrun()``: two ranks on the CPU (gloo).

Written as for smdebug on SageMaker (only the import changed): each rank's hook writes its own
worker's files into the one trial.
"""

import argparse

import torch
import torch.distributed as dist

import sagemaker_debugger_ext.pytorch as smd


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hook = smd.Hook.create_from_json_file()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    hook.set_mode(smd.modes.TRAIN)
    gen = torch.Generator().manual_seed(rank)
    for _ in range(args.steps):
        x = torch.randn(32, 8, generator=gen)
        opt.zero_grad()
        loss_fn(model(x), (x[:, 0] > 0).long()).backward()
        opt.step()
    dist.destroy_process_group()
    print(f"rank {rank} trained", flush=True)


if __name__ == "__main__":
    main()
