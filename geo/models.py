"""Saved point lookups made by staff in the admin (the MCP tool itself keeps no rows)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Granularity(models.TextChoices):
    ADMIN = "admin", "admin (行政区域 /raacs)"
    ESTAT = "estat", "estat (統計小地域 /resareas)"
    JARL = "jarl", "jarl (JCC/JCG /rjccs)"


class PointLookup(models.Model):
    """One resolve_points run from the admin: the points sent and either the results or the error."""

    name = models.CharField(max_length=100, blank=True)
    granularity = models.CharField(max_length=5, choices=Granularity.choices, default=Granularity.ADMIN)
    points = models.JSONField(default=list, help_text="The request's points: [{ref?, lat, lon}].")
    point_count = models.PositiveIntegerField(default=0)
    results = models.JSONField(null=True, blank=True, help_text="The seed's results, one per point.")
    error = models.JSONField(null=True, blank=True, help_text="The seed's error {code, message, location?}.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(granularity__in=Granularity.values), name="geo_pointlookup_granularity_valid"
            ),
            # The seed never returns results together with an error.
            models.CheckConstraint(
                condition=Q(results__isnull=True) | Q(error__isnull=True), name="geo_pointlookup_results_xor_error"
            ),
        ]

    def __str__(self) -> str:
        return self.name or f"Lookup #{self.pk} ({self.point_count} points, {self.granularity})"

    @property
    def outcome(self) -> str:
        if self.error:
            return self.error.get("code", "ERROR")
        return "OK" if self.results is not None else "PENDING"
