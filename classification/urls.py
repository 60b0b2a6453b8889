"""Routes of the classification app (mounted under /api/v1/): SPEC "Data classes and data fields"."""
from django.urls import path

from . import views

urlpatterns = [
    path("data-class", views.DataClassListView.as_view(), name="data-class-list"),
    path("data-field/<str:data_field_id>/update-classes", views.DataFieldUpdateClassesView.as_view(),
         name="data-field-update-classes"),
    path("data-field/<str:data_field_id>/update-entity", views.DataFieldEntityView.as_view(),
         name="data-field-update-entity"),
    path("data-field/<str:data_field_id>/update-data-path", views.DataFieldDataPathView.as_view(),
         name="data-field-update-data-path"),
    path("data-field/<str:data_field_id>", views.DataFieldView.as_view(), name="data-field"),
    path("clear-sensitive-data", views.ClearSensitiveDataView.as_view(), name="clear-sensitive-data"),
    path("clear-all-datafields", views.ClearAllDataFieldsView.as_view(), name="clear-all-datafields"),
]
