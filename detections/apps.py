from django.apps import AppConfig


class DetectionsConfig(AppConfig):
    name = "detections"
