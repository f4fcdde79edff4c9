#!/bin/bash
# OpenRLHF PPO/GRPO with kforge as the remote reward model. Start the service first, e.g.
#   kforge serve --host 0.0.0.0 --port 8000 --problems /data/KernelBench --backend cuda
# (or --redis URL with `kforge worker` processes; see docs/API.md). The prompt dataset's label
# column holds the problem id (e.g. "level1/19_ReLU") or the problem's source text.
# OpenRLHF posts {"query", "prompts", "labels"} to --remote_rm_url and reads "rewards".
set -euo pipefail
KFORGE_HOST=${KFORGE_HOST:-127.0.0.1}
MODEL=${MODEL:-/models/your-kernel-model}
DATA=${DATA:-/data/kernelbench_prompts.jsonl}   # fields: prompt, label

exec python3 -m openrlhf.cli.train_ppo_ray \
  --pretrain "$MODEL" \
  --remote_rm_url "http://${KFORGE_HOST}:8000/get_reward" \
  --prompt_data "$DATA" \
  --input_key prompt \
  --label_key label \
  --apply_chat_template \
  --advantage_estimator group_norm \
  --n_samples_per_prompt 8 \
  --micro_train_batch_size 1 --train_batch_size 64 \
  --micro_rollout_batch_size 8 --rollout_batch_size 64 \
  --max_epochs 1 --num_episodes 1 \
  --prompt_max_len 4096 --generate_max_len 8192 \
  --actor_learning_rate 1e-6 --init_kl_coef 0.0 \
  --save_path ./checkpoints/kforge-rl
