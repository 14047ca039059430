"""NiFi's AWS S3 processors and AWSCredentialsProviderControllerService, on boto3.

boto3 is an optional extra (``pip install 'flowcore[aws]'``): it is imported when a processor is
scheduled or the service enabled, so ``import processors`` does not need it.
"""
