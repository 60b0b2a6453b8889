"""``manage.py rotateagentkey``: a new RSA key pair for encrypted agent traces; previous ones kept."""
import time

from django.core.management.base import BaseCommand

from core.agentkeys import agent_key_rotate


class Command(BaseCommand):
    help = ("Make a new key pair agents encrypt full traces for (served by agent-config from now on). "
            "Previous keys are kept for decryption and re-encrypted at rest under the first configured "
            "AGENT_KEY_ENCRYPTION_KEY / FIELD_ENCRYPTION_KEY / SECRET_KEY. Never prints a private key.")

    def handle(self, *args, **options):
        started = time.monotonic()
        summary = agent_key_rotate(progress=lambda step: self.stdout.write(f"  … {step}"))
        self.stdout.write(f"new active key: {summary.new_fingerprint}")
        self.stdout.write(f"previous keys kept for decryption: {summary.previous_kept} "
                          f"({summary.reencrypted} re-encrypted at rest)")
        for fingerprint in summary.unreadable:
            self.stderr.write(f"previous key {fingerprint} cannot be read with the configured key material: "
                              "kept as it was; traces encrypted for it are counted as undecryptable")
        self.stdout.write("agents switch to the new key on their next agent-config read; "
                          f"done in {time.monotonic() - started:.1f} s")
