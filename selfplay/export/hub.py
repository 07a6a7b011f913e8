"""Push an export directory to the Hugging Face Hub as a dataset repository."""

from __future__ import annotations

from pathlib import Path

PATTERNS = ["*.parquet", "*.jsonl", "README.md", "LICENSE", "reward_func.py"]


class HubError(RuntimeError):
    """The push did not happen; the message is one sentence."""


def push(out: Path, repo_id: str, *, private: bool = False) -> str:
    """Upload the export in `out` (data files, reward file, README.md, LICENSE) to `repo_id`;
    returns its URL.

    The token comes from the usual places (HF_TOKEN, the saved login).
    """
    try:
        from huggingface_hub import HfApi, get_token
    except ImportError:
        raise HubError("pushing needs huggingface_hub: pip install huggingface_hub") from None
    token = get_token()
    if not token:
        raise HubError(
            "no Hugging Face token found: set HF_TOKEN or run `hf auth login`, "
            f"the export stays in {out}"
        )
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        # Only the export's own files: a run's output directory beside them stays local.
        api.upload_folder(
            folder_path=str(out), repo_id=repo_id, repo_type="dataset", allow_patterns=PATTERNS
        )
    except Exception as e:  # network, auth and validation errors all end the same way
        reason = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        raise HubError(
            f"could not push to the Hugging Face Hub ({reason}), the export stays in {out}"
        ) from None
    return f"https://huggingface.co/datasets/{repo_id}"
