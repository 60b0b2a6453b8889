"""The inventory's REST routes: endpoints, hosts and new detections (SPEC.md "Endpoints",
"Hosts", "New detections"). Views stay thin: serializers validate, services act."""
