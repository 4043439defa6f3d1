"""Domain events of the cinema app, for whoever wants to react (the MCP seat-map subscriptions, cinema/resources.py).

Sent after the change is committed, so a receiver never reports a seat that a rollback took back.
"""

from django.dispatch import Signal

# A show's seat map changed (a seat sold or freed). Keyword: schedule_id (the show's public id).
seat_map_changed = Signal()
