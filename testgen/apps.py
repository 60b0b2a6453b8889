from django.apps import AppConfig


class TestgenConfig(AppConfig):
    name = "testgen"
