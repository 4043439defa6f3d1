"""A database cache whose `incr` is atomic, so rate-limit counters shared by processes are exact.

Django's DatabaseCache increments with a read then a write; two processes can read the same count
and both write count+1 (django-ratelimit refuses it for that reason). Here the increment runs in a
transaction that holds the row: `SELECT … FOR UPDATE` on PostgreSQL; on SQLite the IMMEDIATE
transaction mode (settings.py) takes the database write lock at BEGIN.
"""

from django.core.cache.backends.db import DatabaseCache
from django.db import connections, router, transaction


class AtomicDatabaseCache(DatabaseCache):
    def incr(self, key, delta=1, version=None):
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        made_key = self.make_and_validate_key(key, version=version)
        table = connection.ops.quote_name(self._table)
        with transaction.atomic(using=db):
            if connection.features.has_select_for_update:
                with connection.cursor() as cursor:
                    # Locks the counter row so concurrent increments queue behind this one.
                    cursor.execute(f"SELECT cache_key FROM {table} WHERE cache_key = %s FOR UPDATE", [made_key])
            return super().incr(key, delta, version)
