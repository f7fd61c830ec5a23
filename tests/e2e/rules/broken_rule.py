from sagemaker_debugger_ext.rules import Rule

class Broken(Rule)
    pass
