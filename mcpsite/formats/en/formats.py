# The staff's English date and time style, the Japanese one's equivalent (mcpsite/formats/__init__.py).
DATE_FORMAT = "D, M j, Y"
TIME_FORMAT = "H:i"
DATETIME_FORMAT = "D, M j, Y, H:i"
YEAR_MONTH_FORMAT = "F Y"
MONTH_DAY_FORMAT = "D, M j"
