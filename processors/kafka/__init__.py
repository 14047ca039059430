"""Kafka: NiFi 2's Kafka3ConnectionService, ConsumeKafka and PublishKafka, on confluent-kafka.

confluent-kafka is imported lazily (when a service is enabled), so ``import processors`` does not
need it; a missing library is one error naming ``pip install 'flowcore[kafka]'``.
"""
