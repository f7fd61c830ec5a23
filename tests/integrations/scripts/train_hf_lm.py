"""A plain transformers.Trainer script (no Debugger code): a tiny random GPT-2 on synthetic tokens."""

import argparse
import os

import torch
import transformers

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--optim", default="sgd")
args = parser.parse_args()

VOCAB, SEQ = 64, 8
torch.manual_seed(0)
config = transformers.GPT2Config(
    n_layer=2, n_embd=32, n_head=2, vocab_size=VOCAB, n_positions=SEQ, bos_token_id=0, eos_token_id=0
)
model = transformers.GPT2LMHeadModel(config)
ids = (torch.randint(0, VOCAB, (32, 1)) + torch.arange(SEQ)) % VOCAB
data = [{"input_ids": row, "labels": row} for row in ids]
training_args = transformers.TrainingArguments(
    output_dir=os.environ.get("SM_OUTPUT_DATA_DIR", "hf-out"),
    per_device_train_batch_size=4,
    learning_rate=args.lr,
    max_steps=args.steps,
    gradient_accumulation_steps=2,
    optim=args.optim,
    max_grad_norm=0.0,
    report_to=[],
    save_strategy="no",
    logging_steps=1,
    use_cpu=True,
    disable_tqdm=True,
    seed=0,
)
transformers.Trainer(model=model, args=training_args, train_dataset=data).train()
