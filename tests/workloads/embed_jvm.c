/* A program that is not a Java launcher but runs a JVM inside itself through JNI (as
 * jsvc, IDEs and native hosts do): dlopens libjvm.so, creates a VM and calls main() of
 * a class. The process's name and executable are this program's, never "java".
 * Usage: embed_jvm LIBJVM CLASSPATH CLASS [ARG]; exits with what System.exit() says,
 * or 3 when the VM cannot be made. */
#include <dlfcn.h>
#include <jni.h>
#include <stdio.h>

typedef jint (*create_vm_fn)(JavaVM **vm, void **env, void *args);

int main(int argc, char **argv)
{
	char cp[4096];
	JavaVMOption opt[1];
	JavaVMInitArgs args = { 0 };
	JavaVM *vm;
	JNIEnv *env;
	void *lib;
	create_vm_fn create;

	if (argc < 4) {
		fprintf(stderr, "usage: embed_jvm LIBJVM CLASSPATH CLASS [ARG]\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	create = lib ? (create_vm_fn)dlsym(lib, "JNI_CreateJavaVM") : NULL;
	if (!create) {
		fprintf(stderr, "embed_jvm: %s\n", dlerror());
		return 3;
	}
	snprintf(cp, sizeof(cp), "-Djava.class.path=%s", argv[2]);
	opt[0].optionString = cp;
	args.version = JNI_VERSION_1_8;
	args.nOptions = 1;
	args.options = opt;
	if (create(&vm, (void **)&env, &args) != JNI_OK) {
		fprintf(stderr, "embed_jvm: JNI_CreateJavaVM failed\n");
		return 3;
	}
	jclass cls = (*env)->FindClass(env, argv[3]);
	jmethodID m = cls ? (*env)->GetStaticMethodID(env, cls, "main", "([Ljava/lang/String;)V")
			  : NULL;
	if (!m) {
		fprintf(stderr, "embed_jvm: no %s.main\n", argv[3]);
		return 3;
	}
	jclass str = (*env)->FindClass(env, "java/lang/String");
	jobjectArray a = (*env)->NewObjectArray(env, argc > 4 ? 1 : 0, str, NULL);
	if (argc > 4)
		(*env)->SetObjectArrayElement(env, a, 0, (*env)->NewStringUTF(env, argv[4]));
	(*env)->CallStaticVoidMethod(env, cls, m, a);
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionDescribe(env);
	(*vm)->DestroyJavaVM(vm);
	return 0;
}
