#!/bin/bash
# OpenRLHF PPO/GRPO with kforge as the remote reward model. Start the service first, e.g.
#   export KFORGE_TOKEN=$(openssl rand -hex 32)
#   kforge serve --host 0.0.0.0 --port 8000 --token-env KFORGE_TOKEN \
#                --problems /data/KernelBench --backend cuda
# (or on this machine without a token: kforge serve --port 8000 ...; or --redis URL with
# `kforge worker` processes; see docs/API.md). The prompt dataset's label column holds the
# problem id (e.g. "level1/19_ReLU") or the problem's source text.
# OpenRLHF posts {"query", "prompts", "labels"} to /get_reward and reads "rewards". Its
# built-in client sends no Authorization header, so with a token (a service on another
# machine) the reward goes through openrlhf_reward_func.py, which sends KFORGE_TOKEN.
set -euo pipefail
KFORGE_HOST=${KFORGE_HOST:-127.0.0.1}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -n "${KFORGE_TOKEN:-}" ]; then
  export KFORGE_URL="http://${KFORGE_HOST}:8000"
  RM_URL="$HERE/openrlhf_reward_func.py"
else
  RM_URL="http://${KFORGE_HOST}:8000/get_reward"
fi
MODEL=${MODEL:-/models/your-kernel-model}
DATA=${DATA:-/data/kernelbench_prompts.jsonl}   # fields: prompt, label

exec python3 -m openrlhf.cli.train_ppo_ray \
  --pretrain "$MODEL" \
  --remote_rm_url "$RM_URL" \
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
