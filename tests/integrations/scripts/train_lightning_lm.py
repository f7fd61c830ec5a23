"""A plain Lightning script (no Debugger code): the tiny random GPT-2 on synthetic tokens."""

import argparse

import lightning.pytorch as pl
import torch
import transformers

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1e-2)
parser.add_argument("--optim", default="sgd")
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()

VOCAB, SEQ = 64, 8


class LitLM(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        config = transformers.GPT2Config(
            n_layer=2, n_embd=32, n_head=2, vocab_size=VOCAB, n_positions=SEQ, bos_token_id=0, eos_token_id=0
        )
        self.model = transformers.GPT2LMHeadModel(config)

    def training_step(self, batch, batch_idx):
        return self.model(input_ids=batch, labels=batch).loss

    def configure_optimizers(self):
        optim = torch.optim.AdamW if args.optim == "adamw" else torch.optim.SGD
        return optim(self.parameters(), lr=args.lr)


ids = (torch.randint(0, VOCAB, (16, 1)) + torch.arange(SEQ)) % VOCAB
trainer = pl.Trainer(
    accelerator="cpu",
    max_epochs=args.epochs,
    accumulate_grad_batches=2,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
)
trainer.fit(LitLM(), torch.utils.data.DataLoader(ids, batch_size=4))
