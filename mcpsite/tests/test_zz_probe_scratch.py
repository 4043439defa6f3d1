import datetime
import pytest
from mcpsite.mcp.errors import ToolError, InternalError
from merchant.catalog import seed_products

HOSTILE = ['"', "'", 'NEAR(', '*', 'AND OR', 'NOT', '"むぎ', 'むぎ"ぼー', '^', 'a:b', 'col:むぎぼ', '\x00', '\x00\x00\x00', 'むぎ\x00ぼー', '()', '{a b}', 'NEAR(a b, 2)', '-', '+', '""""', "カレンダ*", "%", "_", "\\", "%%%", "___"]

@pytest.mark.parametrize("q", HOSTILE)
def test_merchant(db, call_tool, q):
    for p in seed_products():
        p.save()
    try:
        r = call_tool("search_products", {"keywords": q})
        print(repr(q), r.get("products") and len(r["products"]))
    except InternalError:
        raise
    except ToolError as e:
        print(repr(q), "ToolError", e.code, e.message, e.data)

GEOREFS = ["a\x00b", "\n", "\x1b[31m", "x" * 200, "<script>", "\u202e", "\ud800" if False else "\ufeff"]
@pytest.mark.parametrize("ref", GEOREFS)
def test_geo(db, call_tool, ref):
    r = call_tool("resolve_points", {"points": [{"ref": ref, "lat": 35.0, "lon": 139.0}]})
    print(repr(ref), r)
    assert "INTERNAL" not in str(r)

RRULES = ["FREQ=DAILY\nDTSTART:20200101T000000Z", "FREQ=DAILY\r\nRRULE:FREQ=SECONDLY", "FREQ=DAILY;BYHOUR=\x00", "FREQ=DAILY;X-FOO=BAR",
  "FREQ=YEARLY;BYSETPOS=1;BYMONTH=2;BYMONTHDAY=30", "FREQ=DAILY;COUNT=99999999999999999999", "FREQ=DAILY;INTERVAL=0", "FREQ=DAILY;INTERVAL=-1",
  "FREQ=DAILY;UNTIL=99991231T000000Z", "FREQ=HOURLY;BYSECOND=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59",
  "FREQ=DAILY;BYDAY=XX", "FREQ=DAILY;;;", "RRULE:RRULE:FREQ=DAILY", "EXRULE:FREQ=DAILY", "FREQ=DAILY;WKST=ZZ", "FREQ=WEEKLY;BYDAY=+99MO", "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=1", "FREQ=DAILY;BYHOUR=25",
  "FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO", "FREQ=DAILY;UNTIL=2020", "FREQ=DAILY;TZID=Asia/Tokyo", "FREQ=DAILY:SUMMARY=x", "FREQ=DAILY\nBEGIN:VEVENT"]
@pytest.mark.parametrize("rule", RRULES)
def test_rrule(db, call_tool, rule):
    t = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)).isoformat()
    r = call_tool("reminder.create", {"time": t, "note": "n", "repeat": rule})
    print(repr(rule), r)
    assert r.get("status") in ("ok", "error")

NOTES = ["a\r\nBEGIN:VEVENT\r\nSUMMARY:x", "\x00", "x" * 5000]
@pytest.mark.parametrize("note", NOTES)
def test_note(db, call_tool, note, client):
    t = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)).isoformat()
    r = call_tool("reminder.create", {"time": t, "note": note, "repeat": "daily"})
    print(repr(note)[:50], r)
    r = call_tool("calendar.create", {"title": note[:100], "start": t, "duration_min": 10, "description": note, "location": note[:100]})
    print(r)
    from reminders.models import Profile
    from django.contrib.auth import get_user_model
    for p in Profile.objects.all():
        resp = client.get(p.feed_path)
        print(resp.status_code, resp.content[:600])
