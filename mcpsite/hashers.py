"""Argon2id at the OWASP minimum (m=19 MiB, t=2, p=1).

Django's defaults (m=100 MiB, p=8) measured 5.5–6.5 hashes/s on these 2-core machines, capping
bookings near 6/s and handing attackers a cheap denial of service; these parameters measured 28/s
on one thread. Older hashes keep verifying and are upgraded on the next successful check.
"""

from django.contrib.auth.hashers import Argon2PasswordHasher


class OwaspArgon2PasswordHasher(Argon2PasswordHasher):
    algorithm = "argon2"
    time_cost = 2
    memory_cost = 19 * 1024
    parallelism = 1
